import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseOrThrow } from '../domain/validation.ts';
import { carbenchPath } from './paths.ts';
import { LocationSchema } from './state.ts';

/** CAR-bench's vendored mock data (data/carbench/mock_data): locations, weather, contacts, calendars. */

export const WeatherSlotSchema = z.object({
  start_time: z.string(),
  end_time: z.string(),
  temperature_c: z.number(),
  wind_speed_kph: z.number(),
  humidity_percent: z.number(),
  condition: z.string(),
});
export const WeatherRowSchema = z.object({ location_id: z.string(), location_name: z.string(), weather: z.array(WeatherSlotSchema).length(8) });
export const ContactSchema = z.object({
  id: z.string(),
  name: z.object({ first_name: z.string(), last_name: z.string() }),
  phone_number: z.string(),
  email: z.string(),
});
export const MeetingSchema = z.object({
  start: z.object({ hour: z.string(), minute: z.string() }),
  duration: z.union([z.string(), z.number()]),
  location: z.string(),
  attendees: z.array(z.string()),
  topic: z.string(),
});
export const CalendarSchema = z.object({
  id: z.string(),
  date: z.object({ year: z.number().int(), month: z.number().int(), day: z.number().int() }),
  meetings: z.array(MeetingSchema),
});
export const MockLocationSchema = LocationSchema.extend({ iso2: z.string().optional() });

export type WeatherRow = z.infer<typeof WeatherRowSchema>;
export type Contact = z.infer<typeof ContactSchema>;
export type Calendar = z.infer<typeof CalendarSchema>;
export type MockLocation = z.infer<typeof MockLocationSchema>;

export interface MockData {
  locations: Map<string, MockLocation>;
  weather: Map<string, WeatherRow>;
  contacts: Map<string, Contact>;
  calendars: Map<string, Calendar>;
}

function readJsonl<T>(relative: string, schema: z.ZodType<T>): T[] {
  const path = carbenchPath(relative);
  return readFileSync(path, 'utf8')
    .split('\n')
    .map((line, i) => ({ line, i }))
    .filter(({ line }) => line.trim())
    .map(({ line, i }) => {
      let raw: unknown;
      try {
        raw = JSON.parse(line);
      } catch (error) {
        throw new Error(`${path}:${i + 1}: not JSON: ${(error as Error).message}`);
      }
      return parseOrThrow(schema, raw, `${path}:${i + 1}`);
    });
}

let cached: MockData | undefined;

export function loadMockData(): MockData {
  if (!cached) {
    cached = {
      locations: new Map(readJsonl('mock_data/navigation/locations.jsonl', MockLocationSchema).map((l) => [l.id, l])),
      weather: new Map(readJsonl('mock_data/navigation/weather.jsonl', WeatherRowSchema).map((w) => [w.location_id, w])),
      contacts: new Map(readJsonl('mock_data/productivity_and_communication/contacts.jsonl', ContactSchema).map((c) => [c.id, c])),
      calendars: new Map(readJsonl('mock_data/productivity_and_communication/calendars.jsonl', CalendarSchema).map((c) => [c.id, c])),
    };
  }
  return cached;
}
