/**
 * Which stored runs the bench app compares (as `icabench compare` does): two dialogue runs (suite runs are stored
 * as dialogue runs) by their summaries, two tool-agents runs task by task. Manual-QA runs are not compared: their
 * summary.json and report hold the figures. The compare page greys out a run this refuses, with the reason, before
 * any click; the server answers the same reason with 400.
 */
const COMPARED_KINDS: readonly string[] = ['dialogue', 'tool-agents'];

/** Why runs of these stored kinds cannot be compared (b: the run already chosen on the other side); null when they can. */
export function compareRefusal(kind: string, other?: string | null): string | null {
  if (!COMPARED_KINDS.includes(kind)) return `a ${kind} run is not compared (its summary and report hold the figures); the app compares two ${COMPARED_KINDS.join(' or two ')} runs`;
  if (other && other !== kind) return `a ${kind} run compares with another ${kind} run, not with a ${other} run`;
  return null;
}

/** Why runs of stored kinds `a` and `b` cannot be compared, null when they can; null for a side not known (yet). */
export function comparePairRefusal(a: string | null, b: string | null): string | null {
  if (a === null || b === null) {
    const known = a ?? b;
    return known === null ? null : compareRefusal(known);
  }
  return compareRefusal(a) ?? compareRefusal(b, a);
}
