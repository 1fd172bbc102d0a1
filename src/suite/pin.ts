import { isSeq, parseDocument } from 'yaml';
import { formatMinutes, minutesOfDay, type ContextVector } from '../domain/context.ts';
import type { ConversationResult, UtteranceAnnotation } from '../domain/conversation.ts';
import type { Constraint, Request } from '../domain/targets.ts';
import { decidingTurnVerdict } from '../judge/precedence.ts';
import { loadYamlDocument } from '../config/yaml.ts';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
import { pruneEmpty, SuiteConversationSchema, SuiteFileSchema, suiteToYaml, type SuiteContext, type SuiteConversation, type SuiteFileInput } from './format.ts';
import { DISTRICTS } from '../world/world.ts';

/** Where a pinned conversation came from, written into its `from:`. */
export interface PinSource {
  run: string;
  runName?: string;
  /** the head unit's build the run recorded, when it did */
  unitBuild?: string | null;
}

/**
 * Pin as regression: a stored conversation (a campaign's or a live session's) as a suite conversation. Its
 * user turns with their meanings and each turn's vehicle context; its starting targets as they were before
 * any turn added to them; and expectations derived from what passed, for a person to edit: every turn must
 * be free of failure labels (`forbid: all`), and a turn that passed must carry again the action types it
 * carried. Each turn that passed keeps the reply it got as `reference`, evidence the replay is judged against
 * (docs/reference-judging.md); a failed turn's reply is no example of a right answer and is not kept.
 */
export function pinConversation(result: ConversationResult, source: PinSource): SuiteConversation {
  const turns = result.turns;
  if (turns.length === 0) throw new Error(`conversation ${result.spec.key} has no turns to pin (status ${result.status}${result.error ? `: ${result.error}` : ''})`);
  const introduced = new Set(turns.flatMap((t) => t.utterance.annotation.introduces.map((i) => i.id)));
  const added = new Map<string, Set<Constraint['kind']>>();
  for (const turn of turns) {
    for (const [id, constraints] of Object.entries(turn.utterance.annotation.addedConstraints)) {
      const kinds = added.get(id) ?? new Set();
      constraints.forEach((c) => kinds.add(c.kind));
      added.set(id, kinds);
    }
  }
  // the starting targets: every constraint a turn stated comes back when the turn is replayed
  const targets = result.targets.filter((t) => !introduced.has(t.id)).map((t) => ({ id: t.id, request: withoutStated(t.request, added.get(t.id)) }));
  return {
    id: result.spec.key,
    description: `pinned from run ${source.runName ? `"${source.runName}" (${source.run})` : source.run}, conversation ${result.spec.key}: "${result.spec.seed.text}"`,
    from: { run: source.run, conversation: result.spec.key, ...(source.unitBuild ? { unitBuild: source.unitBuild } : {}), status: result.status },
    targets,
    context: contextChange(null, turns[0].context),
    turns: turns.map((turn, t) => {
      const deciding = decidingTurnVerdict(turn.verdicts);
      const passed = deciding !== null && deciding.labels.length === 0;
      const change = t === 0 ? undefined : contextChange(turns[t - 1].context, turn.context);
      const means = meaningful(turn.utterance.annotation);
      return {
        user: turn.utterance.text,
        ...(change ? { context: change } : {}),
        ...(means ? { means } : {}),
        expect: { actions: passed ? [...new Set(turn.reply?.actions.map((a) => a.type) ?? [])] : [], forbid: 'all' as const },
        ...(turn.reply && passed ? { reference: turn.reply.text } : {}),
      };
    }),
  };
}

function withoutStated(request: Request, stated: Set<Constraint['kind']> | undefined): Request {
  if (!stated || (request.intent !== 'find_poi' && request.intent !== 'navigate')) return request;
  return { ...request, constraints: request.constraints.filter((c) => !stated.has(c.kind)) };
}

/** The annotation without its empty parts; undefined when it says nothing (the replay then reads the words). */
function meaningful(annotation: UtteranceAnnotation): Partial<UtteranceAnnotation> | undefined {
  const kept = pruneEmpty(annotation) as Partial<UtteranceAnnotation>;
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** What changed from `before` to `after`, as a suite context (everything when `before` is null). */
export function contextChange(before: ContextVector | null, after: ContextVector): SuiteContext | undefined {
  const change: SuiteContext = {};
  const moved = !before || before.location.position.lat !== after.location.position.lat || before.location.position.lon !== after.location.position.lon;
  if (!before || before.location.district !== after.location.district || before.location.city !== after.location.city || moved) {
    const known = DISTRICTS.find((d) => d.name === after.location.district && d.city === after.location.city);
    change.district = after.location.district;
    if (!known || known.center.lat !== after.location.position.lat || known.center.lon !== after.location.position.lon) {
      change.city = after.location.city;
      change.position = after.location.position;
    }
  }
  if (!before || before.date !== after.date) change.date = after.date;
  // a suite's clock advances one minute per turn by itself; any other step is written out
  if (!before || formatMinutes(minutesOfDay(before.time) + 1) !== after.time) change.time = after.time;
  if (after.vehicle) {
    const vehicle = Object.fromEntries(Object.entries(after.vehicle).filter(([k, v]) => !before?.vehicle || (before.vehicle as Record<string, unknown>)[k] !== v));
    if (Object.keys(vehicle).length > 0) change.vehicle = vehicle;
  }
  return Object.keys(change).length > 0 ? change : undefined;
}

/** A new suite file holding one pinned conversation. */
export function pinnedSuiteYaml(conversation: SuiteConversation, suiteName: string): string {
  const suite: SuiteFileInput = { suite: suiteName, description: 'Conversations pinned as regressions (icabench pin).', conversations: [conversation] };
  return suiteToYaml(suite, PIN_COMMENT);
}

const PIN_COMMENT = [
  'Pinned by `icabench pin` (docs/suites.md). Edit freely: the expectations were derived from what passed',
  '(each turn: no failure label; a turn that passed: the same action types again). `reference` is the reply',
  'a turn that passed got when the conversation was pinned; the new reply is judged against it (a changed',
  'place, time or number, or a fallback where it answered, is a finding): edit or remove it when the answer may change.',
].join('\n');

/**
 * Adds a pinned conversation to an existing suite file, keeping its comments and layout; a conversation with
 * the same id is refused (pin it into another file, or remove the old one first).
 */
export function addToSuiteYaml(path: string, conversation: SuiteConversation): string {
  // read as `suite check` reads it: a broken file is refused naming the file, the line and the field
  const existing = loadYamlDocument(SuiteFileSchema, path, 'suite');
  const doc = parseDocument(readBoundedText(path, 'suite', FILE_LIMITS.config));
  if (existing.data.conversations.some((c) => c.id === conversation.id)) throw new Error(`${path}: already has a conversation "${conversation.id}"; remove it first or pin into another file`);
  const list = doc.get('conversations', true);
  if (!isSeq(list)) throw new Error(`${path}: conversations is not a list`);
  list.add(doc.createNode(pruneEmpty(SuiteConversationSchema.parse(conversation))));
  return doc.toString({ lineWidth: 0 });
}
