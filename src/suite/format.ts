import { Document } from 'yaml';
import { z } from 'zod';
import { configErrorOf, loadYamlDocument, type ConfigProblem } from '../config/yaml.ts';
import { formatMinutes, minutesOfDay, type ContextVector, type VehicleState } from '../domain/context.ts';
import { CalendarDateSchema, PhysicalPositionSchema, PhysicalVehicleStateSchema, TimeOfDaySchema } from '../domain/physical-context.ts';
import { UtteranceAnnotationSchema, type ConversationSpec, type ScriptedTurn } from '../domain/conversation.ts';
import { TurnExpectationSchema } from '../domain/expectations.ts';
import { RequestSchema } from '../domain/targets.ts';
import { ActionSchema } from '../protocol/bridge.ts';
import { DISTRICTS } from '../world/world.ts';

/**
 * Scripted suites (docs/suites.md): YAML files, usually in bench-configs/suites/, each a list of scripted
 * conversations. Close to Botium's convo files (a user line, what the bot must do), but every turn carries
 * the vehicle context it is said in (speed, gear, state of charge, position, time) and its expectations are
 * structured: action types the reply must carry and failure labels that must not appear. A `kind: suite`
 * campaign replays them against a unit and judges every turn as a campaign does, plus those expectations.
 */

/** The action types of the bridge protocol, the words `expect.actions` accepts. */
export const ACTION_TYPES = ActionSchema.options.map((option) => option.shape.type.value);

/** A context given in a suite: only what changes. Unknown fields are errors (a typo in `gear` must not pass silently). */
export const SuiteContextSchema = z.strictObject({
  date: CalendarDateSchema.optional(),
  time: TimeOfDaySchema.optional(),
  /** a district of the reference world (its city and centre follow), or any name with `city` and `position` */
  district: z.string().min(1).optional(),
  city: z.string().min(1).optional(),
  position: PhysicalPositionSchema.optional(),
  /** the car's state: speed, gear, state of charge, …, each within its physical range; fields left out keep their previous value */
  vehicle: z.strictObject(PhysicalVehicleStateSchema.shape).partial().optional(),
});
export type SuiteContext = z.infer<typeof SuiteContextSchema>;

const ExpectSchema = TurnExpectationSchema.extend({
  actions: z.array(z.enum(ACTION_TYPES as [string, ...string[]], { error: () => `expected an action type (${ACTION_TYPES.join(', ')})` })).default([]),
});

export const SuiteTurnSchema = z.strictObject({
  /** what the driver says */
  user: z.string().min(1).max(10_000),
  /** what changes in the context before this turn (the clock advances one minute per turn unless `time` is given) */
  context: SuiteContextSchema.optional(),
  /** what the words ask for, as the judges read it (targets addressed, constraints, a safety probe, …); absent: the bench reads the words */
  means: z.strictObject(UtteranceAnnotationSchema.shape).partial().optional(),
  /** what the reply must do besides passing the judges */
  expect: ExpectSchema.optional(),
  /** what a recorded assistant answered here (imported transcripts, pinned conversations): the reply is judged against it (docs/reference-judging.md) */
  reference: z.string().optional(),
});
export type SuiteTurn = z.infer<typeof SuiteTurnSchema>;

/** The most turns a suite conversation may have. */
export const MAX_SUITE_TURNS = 50;

export const SuiteConversationSchema = z.strictObject({
  /** unique in the suite; the conversation's key in every run (compare matches conversations by it) */
  id: z.string().regex(/^[\w.:-]{1,120}$/, 'expected an id of letters, digits, "_", "-", ".", ":" (at most 120)'),
  description: z.string().default(''),
  /** where it came from: a pinned conversation's run and key, an imported dialogue's id */
  from: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  /** what the driver wants from the start, with the ids `means` names; more can be introduced by turns */
  targets: z.array(z.strictObject({ id: z.string().min(1), request: RequestSchema })).default([]),
  context: SuiteContextSchema.optional(),
  turns: z.array(SuiteTurnSchema).min(1).max(MAX_SUITE_TURNS),
});
export type SuiteConversation = z.infer<typeof SuiteConversationSchema>;

export const SuiteFileSchema = z
  .strictObject({
    suite: z.string().min(1),
    description: z.string().default(''),
    /** the context every conversation starts from (default: Maxvorstadt, Munich, 2026-05-12 12:00, no vehicle data) */
    context: SuiteContextSchema.optional(),
    conversations: z.array(SuiteConversationSchema).min(1).max(10_000),
  })
  .superRefine((suite, ctx) => {
    const seen = new Map<string, number>();
    suite.conversations.forEach((c, i) => {
      if (seen.has(c.id)) ctx.addIssue({ code: 'custom', path: ['conversations', i, 'id'], message: `the id "${c.id}" is already used by conversation ${seen.get(c.id)! + 1}; ids must be unique in a suite` });
      else seen.set(c.id, i);
    });
  });
export type SuiteFile = z.infer<typeof SuiteFileSchema>;
export type SuiteFileInput = z.input<typeof SuiteFileSchema>;

/** Where a suite conversation starts when neither the suite nor the conversation says. */
export const DEFAULT_SUITE_START: ContextVector = {
  location: { city: 'Munich', district: 'Maxvorstadt', position: { lat: 48.15, lon: 11.568 } },
  date: '2026-05-12',
  time: '12:00',
};

/** A loaded suite: its conversations as scripts, each turn's full context resolved. */
export interface LoadedSuite {
  path: string;
  suite: SuiteFile;
  scripts: SuiteScript[];
}

export interface SuiteScript {
  conversation: SuiteConversation;
  turns: ScriptedTurn[];
}

/** A context that cannot be placed (an unknown district without a position), at its field. */
export class SuiteContextProblem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** `context` applied over `base`: a district brings its city and centre; a vehicle field left out keeps its value. */
export function applySuiteContext(base: ContextVector, change: SuiteContext | undefined, field: string): ContextVector {
  if (!change) return base;
  const next: ContextVector = { ...base, location: { ...base.location } };
  if (change.district) {
    const known = DISTRICTS.find((d) => d.name.toLowerCase() === change.district!.toLowerCase());
    if (known) next.location = { city: known.city, district: known.name, position: known.center };
    else {
      if (!change.city || !change.position) throw new SuiteContextProblem(`${field}.district`, `"${change.district}" is not a district of the reference world (${DISTRICTS.map((d) => d.name).join(', ')}); give its city and position too`);
      next.location = { city: change.city, district: change.district, position: change.position };
    }
  }
  if (change.city) next.location.city = change.city;
  if (change.position) next.location.position = change.position;
  if (change.date) next.date = change.date;
  if (change.time) next.time = change.time;
  if (change.vehicle) {
    // a first vehicle state starts parked at 0 km/h: a turn that says only "gear: D" is not left without a speed
    const vehicle: VehicleState = { ...(base.vehicle ?? { speedKmh: 0, gear: 'P' }), ...change.vehicle };
    next.vehicle = vehicle;
  }
  return next;
}

/** The turns of one conversation with their full contexts: the suite's start, the conversation's, then each turn's change. */
export function scriptOf(suite: SuiteFile, conversation: SuiteConversation): ScriptedTurn[] {
  const index = suite.conversations.indexOf(conversation);
  let context = applySuiteContext(applySuiteContext(DEFAULT_SUITE_START, suite.context, 'context'), conversation.context, `conversations.${index}.context`);
  return conversation.turns.map((turn, t) => {
    // the clock advances one minute per turn unless the turn sets it
    if (t > 0 && !turn.context?.time) context = { ...context, time: formatMinutes(minutesOfDay(context.time) + 1) };
    context = applySuiteContext(context, turn.context, `conversations.${index}.turns.${t}.context`);
    return {
      text: turn.user,
      context,
      ...(turn.means ? { annotation: UtteranceAnnotationSchema.parse(turn.means) } : {}),
      ...(turn.expect ? { expect: turn.expect } : {}),
      ...(turn.reference?.trim() ? { reference: turn.reference } : {}),
    };
  });
}

/** Reads and validates a suite file (errors name the file, the line and the field), resolving every turn's context. */
export function loadSuite(path: string): LoadedSuite {
  const { data: suite, at } = loadYamlDocument(SuiteFileSchema, path, 'suite');
  const problems: ConfigProblem[] = [];
  const scripts = suite.conversations.flatMap((conversation) => {
    try {
      return [{ conversation, turns: scriptOf(suite, conversation) }];
    } catch (error) {
      if (!(error instanceof SuiteContextProblem)) throw error;
      const line = Number(at(error.field).slice(path.length + 1));
      problems.push({ path: error.field, line: line > 0 ? line : null, message: error.message });
      return [];
    }
  });
  if (problems.length > 0) throw configErrorOf(path, problems);
  return { path, suite, scripts };
}

/**
 * The conversation specs a suite plays: one per conversation and repeat, keyed by the conversation's id (with
 * `-r<n>` per repeat when there are several, the plan-key form pass^k groups by), so two runs of one suite
 * (two unit builds) match conversation by conversation.
 */
export function suiteSpecs(suite: LoadedSuite, repeats = 1): ConversationSpec[] {
  return suite.scripts.flatMap(({ conversation, turns }) =>
    Array.from({ length: repeats }, (_, repeat) => ({
      key: repeats === 1 ? conversation.id : `${conversation.id}-r${repeat}`,
      seed: { id: conversation.id, text: conversation.description || turns[0].text, requests: conversation.targets.map((t) => t.request) },
      persona: 'neutral' as const,
      mode: 'baseline' as const,
      strategies: [],
      maxTurns: turns.length,
      context: turns[0].context,
      repeat,
      rngSeed: 0,
      script: turns,
      targetIds: conversation.targets.map((t) => t.id),
    })),
  );
}

/** A suite as YAML text, with a comment on top (how it was made, what to edit). Fields at their defaults are left out. */
export function suiteToYaml(suite: SuiteFileInput, comment: string): string {
  const checked = SuiteFileSchema.parse(suite);
  const doc = new Document(pruneEmpty(checked));
  doc.commentBefore = comment
    .split('\n')
    .map((line) => ` ${line}`)
    .join('\n');
  return doc.toString({ lineWidth: 0 });
}

/** Drops empty lists, empty maps, empty strings and a `closing: false`, so a written suite shows what matters. */
export function pruneEmpty(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruneEmpty);
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).flatMap(([k, v]) => {
      const pruned = pruneEmpty(v);
      const empty = pruned === undefined || pruned === '' || (k === 'closing' && pruned === false) || (Array.isArray(pruned) && pruned.length === 0) || (pruned && typeof pruned === 'object' && !Array.isArray(pruned) && Object.keys(pruned).length === 0);
      return empty ? [] : [[k, pruned] as const];
    });
    return Object.fromEntries(entries);
  }
  return value;
}
