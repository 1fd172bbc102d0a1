import { z } from 'zod';
import { parseRemovedParts, toolByName, usesRemovedParameter, type JsonSchemaNode } from '../../toolenv/catalog.ts';
import type { AgentReply, AgentTurnInput, ToolAgent } from './loop.ts';
import { isHallucination, type Task, type TaskAction } from '../../toolenv/tasks.ts';
import type { FaultProfile } from './config.ts';

/**
 * The reference agent: replays a task's ground-truth actions through the same loop (asking for confirmation before
 * REQUIRES_CONFIRMATION tools, asking the user on disambiguation_user tasks, admitting what it cannot do on
 * hallucination tasks). Fault profiles each break one scoring component on purpose, so the scoring is tested.
 */
type Step = { kind: 'calls'; calls: Array<{ name: string; kwargs: Record<string, unknown> }> } | { kind: 'say'; text: string };

const isStateChanging = (name: string): boolean => toolByName(name)?.kind === 'set';

function groupSteps(actions: TaskAction[]): Array<Array<{ name: string; kwargs: Record<string, unknown> }>> {
  const steps: Array<Array<{ name: string; kwargs: Record<string, unknown> }>> = [];
  let lastIndex = -1;
  for (const action of actions) {
    const call = { name: action.name, kwargs: structuredClone(action.kwargs) };
    if (action.index === lastIndex && steps.length) steps.at(-1)!.push(call);
    else steps.push([call]);
    lastIndex = action.index;
  }
  return steps;
}

function perturbValue(schema: JsonSchemaNode | boolean | undefined, value: unknown): { ok: boolean; value?: unknown } {
  if (!schema || typeof schema === 'boolean') return { ok: false };
  if (schema.enum) {
    const options = schema.enum.filter((e) => e !== value && e !== 'NONE');
    return options.length ? { ok: true, value: options[0] } : { ok: false };
  }
  if (typeof value === 'boolean') return { ok: true, value: !value };
  if (typeof value === 'number' && schema.minimum !== undefined && schema.maximum !== undefined) {
    const next = value <= (schema.minimum + schema.maximum) / 2 ? schema.maximum : schema.minimum;
    return next !== value ? { ok: true, value: next } : { ok: false };
  }
  return { ok: false };
}

/** The last state-changing call with a parameter that can be changed to another valid value, changed. */
function guessedCalls(steps: Step[]): boolean {
  for (let s = steps.length - 1; s >= 0; s--) {
    const step = steps[s];
    if (step.kind !== 'calls') continue;
    for (let c = step.calls.length - 1; c >= 0; c--) {
      const call = step.calls[c];
      if (!isStateChanging(call.name)) continue;
      const props = toolByName(call.name)!.openai_schema.function.parameters.properties ?? {};
      // numbers first, then booleans, then enum values: the change most likely to move the state
      const rank = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'boolean' ? 1 : 2);
      for (const [param, value] of Object.entries(call.kwargs).sort((a, b) => rank(a[1]) - rank(b[1]))) {
        const changed = perturbValue(props[param], value);
        if (changed.ok) {
          call.kwargs[param] = changed.value;
          return true;
        }
      }
    }
  }
  return false;
}

function nextDay(task: Task): { month: number; day: number } {
  const d = task.context_init_config.current_datetime;
  const date = new Date(Date.UTC(d.year, d.month - 1, d.day + 1));
  return { month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

const GATES: Record<string, { gated: (c: { name: string; kwargs: Record<string, unknown> }) => boolean; prerequisite: string; alternatives: string[][] }> = {
  '009': { gated: (c) => c.name === 'open_close_sunroof' && c.kwargs.percentage !== 0, prerequisite: 'get_weather', alternatives: [] },
  '010': {
    gated: (c) => c.name === 'set_window_defrost' && c.kwargs.on === true && (c.kwargs.defrost_window === 'FRONT' || c.kwargs.defrost_window === 'ALL'),
    prerequisite: 'get_climate_settings',
    alternatives: [['set_fan_speed', 'set_fan_airflow_direction', 'set_air_conditioning']],
  },
  '013': { gated: (c) => c.name === 'set_fog_lights' && c.kwargs.on === true, prerequisite: 'get_exterior_lights_status', alternatives: [['set_head_lights_low_beams', 'set_head_lights_high_beams']] },
  '014': { gated: (c) => c.name === 'set_head_lights_high_beams' && c.kwargs.on === true, prerequisite: 'get_exterior_lights_status', alternatives: [['set_fog_lights']] },
};

/** Moves the rule's prerequisite check into the same step as the gated call: same calls, same states, rule broken. */
function violateGate(steps: Step[], rule: keyof typeof GATES): boolean {
  const gate = GATES[rule];
  const at = steps.findIndex((s) => s.kind === 'calls' && s.calls.some(gate.gated));
  if (at < 0) return false;
  const before = steps.slice(0, at).flatMap((s) => (s.kind === 'calls' ? s.calls.map((c) => c.name) : []));
  if (!before.includes(gate.prerequisite)) return false;
  if (gate.alternatives.some((alt) => alt.every((n) => before.includes(n)))) return false;
  const moved: Array<{ name: string; kwargs: Record<string, unknown> }> = [];
  for (let s = 0; s < at; s++) {
    const step = steps[s];
    if (step.kind !== 'calls') continue;
    moved.push(...step.calls.filter((c) => c.name === gate.prerequisite));
    step.calls = step.calls.filter((c) => c.name !== gate.prerequisite);
  }
  const target = steps[at] as Extract<Step, { kind: 'calls' }>;
  target.calls = [...moved, ...target.calls];
  for (let s = at - 1; s >= 0; s--) if (steps[s].kind === 'calls' && (steps[s] as Extract<Step, { kind: 'calls' }>).calls.length === 0) steps.splice(s, 1);
  return true;
}

/**
 * A few reference action lists call a gated tool without the check CAR-bench's code scan wants first (base_26 turns
 * the AC on without get_climate_settings, base_44 the high beams without get_exterior_lights_status). Checks are
 * read-only, so the reference agent inserts them: the state path and the tool subset are unchanged.
 */
function ensurePrerequisites(groups: Array<Array<{ name: string; kwargs: Record<string, unknown> }>>, task: Task): void {
  const now = task.context_init_config.current_datetime;
  const checks: Array<{ gated: (c: { name: string; kwargs: Record<string, unknown> }) => boolean; call: { name: string; kwargs: Record<string, unknown> }; satisfied: (before: string[]) => boolean }> = [
    {
      gated: GATES['009'].gated,
      call: { name: 'get_weather', kwargs: { location_or_poi_id: task.context_init_config.current_location.id, month: now.month, day: now.day, time_hour_24hformat: now.hour, time_minutes: now.minute } },
      satisfied: (b) => b.includes('get_weather'),
    },
    { gated: GATES['010'].gated, call: { name: 'get_climate_settings', kwargs: {} }, satisfied: (b) => b.includes('get_climate_settings') || GATES['010'].alternatives.some((alt) => alt.every((n) => b.includes(n))) },
    {
      gated: (c) => c.name === 'set_air_conditioning' && c.kwargs.on === true,
      call: { name: 'get_climate_settings', kwargs: {} },
      satisfied: (b) => b.includes('get_climate_settings') || (b.includes('open_close_window') && b.includes('set_fan_speed')) || !(b.includes('get_vehicle_window_positions') || b.includes('open_close_window')),
    },
    { gated: GATES['013'].gated, call: { name: 'get_exterior_lights_status', kwargs: {} }, satisfied: (b) => b.includes('get_exterior_lights_status') || GATES['013'].alternatives.some((alt) => alt.every((n) => b.includes(n))) },
    { gated: GATES['014'].gated, call: { name: 'get_exterior_lights_status', kwargs: {} }, satisfied: (b) => b.includes('get_exterior_lights_status') || b.includes('set_fog_lights') },
  ];
  for (let g = 0; g < groups.length; g++) {
    const before = groups.slice(0, g).flatMap((x) => x.map((c) => c.name));
    const missing = checks.filter((check) => groups[g].some(check.gated) && !check.satisfied(before));
    if (missing.length) {
      groups.splice(g, 0, missing.map((m) => structuredClone(m.call)));
      g++;
    }
  }
}

/**
 * A hallucination task replayed honestly: the steps before the first one that needs the removed part (a removed
 * tool, or a call with a removed parameter), and nothing after it — a later reference action may depend on what
 * the removed part would have done (a waypoint never added cannot be replaced), so going on would break the task
 * or fabricate. A removed result field is read (the tool still answers, with the field "unknown") and the replay
 * stops right after that step. Calls of the cut step that need nothing removed still run (they are parallel, so
 * independent of it); a conversation-ending tool never runs, so the acknowledgement can be heard.
 */
function stopAtRemovedPart(groups: ReturnType<typeof groupSteps>, removals: ReturnType<typeof parseRemovedParts>): ReturnType<typeof groupSteps> {
  const needsRemoved = (c: { name: string; kwargs: Record<string, unknown> }) =>
    removals.tools.has(c.name) || (removals.parameters.get(c.name) ?? []).some((p) => usesRemovedParameter(c.kwargs, p));
  const kept: ReturnType<typeof groupSteps> = [];
  for (const group of groups) {
    const usable = group.filter((c) => !needsRemoved(c) && !toolByName(c.name)?.terminates_conversation);
    if (usable.length) kept.push(usable);
    if (usable.length < group.filter((c) => !toolByName(c.name)?.terminates_conversation).length) break;
    if (group.some((c) => removals.results.has(c.name))) break;
  }
  return kept;
}

export interface ReplayPlan {
  steps: Step[];
  /** whether the fault profile changed anything on this task */
  faultFired: boolean;
}

export function planReplay(task: Task, fault: FaultProfile = { kind: 'none' }): ReplayPlan {
  const removals = parseRemovedParts(task.removed_part);
  const hallucination = isHallucination(task.task_type);
  let fired = false;
  let groups = groupSteps(task.actions);
  ensurePrerequisites(groups, task);

  if (hallucination) {
    if (fault.kind === 'fabricates_removed') fired = true;
    else groups = stopAtRemovedPart(groups, removals);
  }
  if (fault.kind === 'half_done' && !hallucination) {
    for (let s = groups.length - 1; s >= 0 && !fired; s--) {
      const i = groups[s].map((c) => isStateChanging(c.name)).lastIndexOf(true);
      if (i >= 0) {
        groups[s].splice(i, 1);
        fired = true;
      }
    }
    groups = groups.filter((g) => g.length);
  }
  if (fault.kind === 'guesses_disambiguation' && task.task_type.startsWith('disambiguation')) {
    const withoutPrefs = groups.map((g) => g.filter((c) => c.name !== 'get_user_preferences')).filter((g) => g.length);
    const candidate: Step[] = withoutPrefs.map((calls) => ({ kind: 'calls', calls }));
    if (guessedCalls(candidate)) {
      fired = true;
      groups = candidate.map((s) => (s as Extract<Step, { kind: 'calls' }>).calls);
    }
  }

  let steps: Step[] = groups.map((calls) => ({ kind: 'calls', calls }));
  if (fault.kind === 'violates_policy' && !hallucination) {
    if (fault.rule === '024' || fault.rule === '023') {
      const { month, day } = nextDay(task);
      const call =
        fault.rule === '024'
          ? { name: 'get_weather', kwargs: { location_or_poi_id: task.context_init_config.current_location.id, month, day, time_hour_24hformat: 12 } }
          : { name: 'get_entries_from_calendar', kwargs: { month, day } };
      steps.unshift({ kind: 'calls', calls: [call] });
      fired = true;
    } else fired = violateGate(steps, fault.rule);
  }

  // conversation moves around the calls
  const out: Step[] = [];
  let askedUser = false;
  for (const step of steps) {
    if (step.kind !== 'calls') continue;
    if (task.task_type === 'disambiguation_user' && fault.kind !== 'guesses_disambiguation' && !askedUser && step.calls.some((c) => isStateChanging(c.name))) {
      out.push({ kind: 'say', text: `Regarding ${task.disambiguation_element_user}: which option do you prefer?` });
      askedUser = true;
    }
    const needsConfirmation = step.calls.filter((c) => toolByName(c.name)?.requires_confirmation);
    if (needsConfirmation.length) {
      if (fault.kind === 'acts_before_confirming' && !hallucination) fired = true;
      else out.push({ kind: 'say', text: `I am about to run ${needsConfirmation.map((c) => `${c.name} with ${JSON.stringify(c.kwargs)}`).join(' and ')}. Shall I proceed?` });
    }
    out.push(step);
  }
  if (hallucination && fault.kind !== 'fabricates_removed') {
    const parts = (task.removed_part ?? []).map((p) => p.replace(/^result\./, 'the result field '));
    out.push({ kind: 'say', text: `I'm sorry, I cannot fully do this: ${parts.join(', ')} is not available to me.` });
  }
  return { steps: out, faultFired: fired };
}

export const DONE_TEXT = 'Done, all requested actions are complete.';

/** The name a replay agent stores with every trial it ran: `replay`, or `replay+<fault>` with a fault profile. */
export function replayAgentName(fault: FaultProfile): string {
  return fault.kind === 'none' ? 'replay' : `replay+${fault.kind}${fault.kind === 'violates_policy' ? `:${fault.rule}` : ''}`;
}

/** Whether a stored trial's agent was the replay agent (it performs the task's reference actions; no agent was tested). */
export function isReplayAgentName(name: string): boolean {
  return name === 'replay' || name.startsWith('replay+');
}

export class ReplayAgent implements ToolAgent {
  readonly name: string;
  private steps: Step[] = [];
  private cursor = 0;
  private callCounter = 0;
  faultFired = false;

  constructor(readonly fault: FaultProfile = { kind: 'none' }) {
    this.name = replayAgentName(fault);
  }

  begin(task: Task): void {
    const plan = planReplay(task, this.fault);
    this.steps = plan.steps;
    this.faultFired = plan.faultFired;
    this.cursor = 0;
  }

  async next(_input: AgentTurnInput): Promise<AgentReply> {
    const step = this.steps[this.cursor++];
    if (!step) return { content: DONE_TEXT, toolCalls: [] };
    if (step.kind === 'say') return { content: step.text, toolCalls: [] };
    return { content: '', toolCalls: step.calls.map((c) => ({ id: `replay_${this.callCounter++}`, name: c.name, arguments: c.kwargs })) };
  }
}
