import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
import { parseOrThrow } from '../domain/validation.ts';
import { normalizeWords } from './metrics.ts';
import { VoiceError, type Pcm16 } from './types.ts';
import { readWav, writeWav } from './wav.ts';

/**
 * An utterance library: recorded (or prepared) driver speech with transcripts, described by
 * manifest.json in the library folder. Campaigns use a recording instead of synthesis when its
 * transcript matches the simulator's utterance.
 */
export const MANIFEST_FILE = 'manifest.json';

export const UtteranceEntrySchema = z.object({
  id: z.string().regex(/^[A-Za-z0-9._-]+$/, 'expected letters, digits, ".", "_" or "-" (it names the WAV file)'),
  /** WAV path relative to the library folder: 16 kHz mono 16-bit */
  wav: z.string().min(1),
  /** exactly what is said */
  text: z.string().min(1),
  speaker: z.string().optional(),
  persona: z.string().optional(),
  recordedAt: z.string().optional(),
});
export type UtteranceEntry = z.infer<typeof UtteranceEntrySchema>;

export const UtteranceManifestSchema = z.object({ utterances: z.array(UtteranceEntrySchema) });
export type UtteranceManifest = z.infer<typeof UtteranceManifestSchema>;

export interface LibraryUtterance extends UtteranceEntry {
  pcm: Pcm16;
}

export class UtteranceLibrary {
  private readonly byText = new Map<string, LibraryUtterance>();

  constructor(readonly dir: string, readonly utterances: readonly LibraryUtterance[]) {
    for (const u of utterances) this.byText.set(normalizeWords(u.text).join(' '), u);
  }

  /** The recording whose transcript matches `text` (compared as normalized words), if any. */
  find(text: string): LibraryUtterance | undefined {
    return this.byText.get(normalizeWords(text).join(' '));
  }
}

export function readManifest(dir: string): UtteranceManifest {
  const path = join(dir, MANIFEST_FILE);
  if (!existsSync(path)) return { utterances: [] };
  let raw: unknown;
  let text: string;
  try {
    text = readBoundedText(path, 'voice library manifest', FILE_LIMITS.voiceList);
  } catch (error) {
    throw new VoiceError((error as Error).message);
  }
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new VoiceError(`${path}: not valid JSON (${(error as Error).message})`);
  }
  const manifest = parseOrThrow(UtteranceManifestSchema, raw, path);
  const ids = new Set<string>();
  for (const u of manifest.utterances) {
    if (ids.has(u.id)) throw new VoiceError(`${path}: utterance id "${u.id}" appears twice`);
    ids.add(u.id);
  }
  return manifest;
}

/** Loads and checks every WAV of the library; a bad file is reported by its path. */
export async function loadUtteranceLibrary(dir: string): Promise<UtteranceLibrary> {
  const root = resolve(dir);
  const manifest = readManifest(root);
  const utterances: LibraryUtterance[] = [];
  for (const entry of manifest.utterances) utterances.push({ ...entry, pcm: await readWav(join(root, entry.wav)) });
  return new UtteranceLibrary(root, utterances);
}

/** Adds (or replaces) an utterance: writes <id>.wav and updates the manifest. */
export async function addUtterance(dir: string, entry: Omit<UtteranceEntry, 'wav'>, pcm: Pcm16): Promise<UtteranceEntry> {
  const root = resolve(dir);
  await mkdir(root, { recursive: true });
  const manifest = readManifest(root);
  const saved = parseOrThrow(UtteranceEntrySchema, { ...entry, wav: `${entry.id}.wav` }, `utterance ${entry.id}`);
  await writeWav(join(root, saved.wav), pcm);
  const utterances = [...manifest.utterances.filter((u) => u.id !== saved.id), saved];
  const path = join(root, MANIFEST_FILE);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, JSON.stringify({ utterances }, null, 2) + '\n');
  return saved;
}
