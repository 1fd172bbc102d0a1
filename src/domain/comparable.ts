import type { ConversationSpec } from './conversation.ts';

/**
 * Which stored runs the bench app and `icabench compare` compare: two runs whose kinds are in one of the `groups` (their
 * kinds show them with one view that compares, src/kinds/registry.ts comparedKindGroups): runs of conversations (dialogue,
 * suite or live: a suite pinned from a dialogue run replays its conversations) by their summaries, tool-agents runs task by
 * task. Other kinds' summary.json and report hold the figures. The compare page greys out a run this refuses, with the
 * reason, before any click; the server answers the same reason with 400.
 */
export function compareRefusal(kind: string, groups: readonly (readonly string[])[], other?: string | null): string | null {
  const family = groups.find((kinds) => kinds.includes(kind));
  if (!family) return `a ${kind} run is not compared (its summary and report hold the figures); the app compares ${groups.map((g) => `two ${orList(g)} runs`).join(', or ')}`;
  if (other && !family.includes(other)) return `${comparesWith(kind, family)}, not with a ${other} run`;
  return null;
}

/** "a tool-agents run compares with another tool-agents run", "a live run compares with a dialogue, suite, live run" */
export function comparesWith(kind: string, family: readonly string[]): string {
  return `a ${kind} run compares with ${family.length === 1 ? `another ${kind} run` : `a ${family.join(', ')} run`}`;
}

/** The warnings of a comparison as the compare page and `icabench compare` say them; null when there are none. */
export function comparisonWarningsText(warnings: readonly string[]): string | null {
  return warnings.length ? `Read these side by side with care: ${warnings.join('; ')}.` : null;
}

/** "a", "a or b", "a, b or c" */
function orList(names: readonly string[]): string {
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names[0];
}

/** Why runs of stored kinds `a` and `b` cannot be compared, null when they can; null for a side not known (yet). */
export function comparePairRefusal(a: string | null, b: string | null, groups: readonly (readonly string[])[]): string | null {
  if (a === null || b === null) {
    const known = a ?? b;
    return known === null ? null : compareRefusal(known, groups);
  }
  return compareRefusal(a, groups) ?? compareRefusal(b, groups, a);
}

/** The fields of a conversation spec in the order a plan difference names them (the one most likely to differ first). */
const PLAN_FIELDS = ['mode', 'persona', 'strategies', 'maxTurns', 'seed', 'context', 'rngSeed', 'repeat', 'scenario', 'vehicleStartS', 'snrDb', 'script', 'targetIds'] as const;

/** A spec value as a difference names it: short values as they are, the rest by what they are. */
function shown(value: unknown): string | null {
  if (value === undefined || value === null) return 'none';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== 'object')) return value.join(',') || 'none';
  if ('id' in value && typeof value.id === 'string') return value.id;
  return null;
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Why two runs' conversations are not the same conversations, so no conversation of one can be paired with one
 * of the other (fixed / regressed): the first spec field that differs between the conversations of one key
 * ("mode guided vs baseline"), or that they share no key. null when they are runs of one plan: the same config
 * and sampling seed, or the same suite (on two unit builds).
 */
export function planDifference(a: readonly ConversationSpec[], b: readonly ConversationSpec[]): string | null {
  const inB = new Map(b.map((spec) => [spec.key, spec]));
  const shared = a.filter((spec) => inB.has(spec.key));
  if (shared.length === 0) return a.length > 0 && b.length > 0 ? 'no conversation key in common' : null;
  for (const field of PLAN_FIELDS) {
    for (const specA of shared) {
      const specB = inB.get(specA.key)!;
      if (sameValue(specA[field], specB[field])) continue;
      const [x, y] = [shown(specA[field]), shown(specB[field])];
      return x !== null && y !== null && x !== y ? `${field} ${x} vs ${y}` : `${field} of ${specA.key} differs`;
    }
  }
  return null;
}

/** The settings that decide a verdict: two runs that differ in one of them do not measure the same thing. */
const VERDICT_SETTINGS = [
  ['method', 'method'],
  ['scoring', 'verdict rules (scoring: failOn, θ, inconclusive, weights)'],
  ['judges', 'judges'],
  ['safety', 'safety policy'],
] as const;

/** A setting as a run's config holds it; a kind without `method` runs the lab defaults (the default method). */
function setting(config: Record<string, unknown>, field: string): unknown {
  return field === 'method' ? (config.method ?? 'lab') : config[field];
}

/**
 * Why two runs' figures may not be read side by side as like for like: the verdict settings their configs differ in
 * (method, verdict rules, judges, safety policy), and a plan difference (`unpaired`, planDifference's reason). Empty
 * when they were judged alike and ran one plan.
 */
export function comparisonWarnings(configA: unknown, configB: unknown, unpaired?: string | null): string[] {
  const [a, b] = [configA, configB].map((c) => (c && typeof c === 'object' ? (c as Record<string, unknown>) : {}));
  const warnings = VERDICT_SETTINGS.filter(([field]) => !sameValue(setting(a, field), setting(b, field))).map(([field, what]) => {
    const [x, y] = [shown(setting(a, field)), shown(setting(b, field))];
    return `the runs differ in their ${what}${x !== null && y !== null ? `: ${x} vs ${y}` : ''}`;
  });
  if (unpaired) warnings.push(`the runs ran different plans (${unpaired}): their rates compare as samples, not conversation by conversation`);
  return warnings;
}
