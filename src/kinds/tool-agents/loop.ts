import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { toolByName, usesRemovedParameter, type OpenAiTool } from '../../toolenv/catalog.ts';
import { ToolEnvironment } from '../../toolenv/env.ts';
import { loadMockData } from '../../toolenv/mockdata.ts';
import { NavigationDb, UnresolvableEntityError } from '../../toolenv/navdb.ts';
import { carbenchPath } from '../../toolenv/paths.ts';
import type { DynamicState } from '../../toolenv/state.ts';
import type { PolicyJudge } from './judge.ts';
import { describeFailures, replayReference, scoreTrajectory, ScoreSchema, type EndFailure, type ReferenceReplay } from './scoring.ts';
import { taskFamily, TaskTypeSchema, type Task } from '../../toolenv/tasks.ts';
import { TrajectoryMessageSchema, type ToolCall, type TrajectoryMessage } from './trajectory.ts';
import { DeterministicTaskUser, type TaskSimulator, type UserReply } from './usersim.ts';

export const MAX_AGENT_MESSAGES = 40;

/** What an agent sees on each turn. */
export interface AgentTurnInput {
  systemPrompt: string;
  tools: OpenAiTool[];
  messages: readonly TrajectoryMessage[];
}
/** An agent's reply: text, or tool calls (each run as a separate action). `arguments` may be raw text. */
export interface AgentReply {
  content: string;
  /** the model's reasoning, when its server returns it (an endpoint agent in a reasoning mode) */
  reasoning?: string;
  toolCalls: Array<{ id?: string; name: string; arguments: unknown }>;
}
export interface ToolAgent {
  readonly name: string;
  /** called once per trial; reference agents read the task, endpoint agents ignore it */
  begin?(task: Task): void;
  next(input: AgentTurnInput): Promise<AgentReply>;
  /** called once when the trial ends (a bridge unit is told the session is over) */
  end?(reason: string): Promise<void>;
}

export const TrialOutcomeSchema = z.enum(['scored', 'max_messages', 'agent_error', 'simulator_error', 'not_runnable']);
export const TrialResultSchema = z.object({
  taskId: z.string(),
  taskType: TaskTypeSchema,
  family: z.enum(['base', 'hallucination', 'disambiguation']),
  trial: z.number().int().nonnegative(),
  agent: z.string(),
  userSimulator: z.string(),
  /** a hallucination task's removed_part, kept with the trial so that its failure can be read from the stored trajectory (absent in runs stored before) */
  removedPart: z.array(z.string()).optional(),
  outcome: TrialOutcomeSchema,
  /** R ∈ {0, 1}; 0 for every outcome except a scored success; null only when the task is not runnable */
  reward: z.union([z.literal(0), z.literal(1)]).nullable(),
  reason: z.string(),
  endedBy: z.enum(['user', 'terminate_tool', 'max_messages', 'error', 'not_run']),
  userKeyword: z.string().nullable(),
  score: ScoreSchema.nullable(),
  failures: z.array(z.string()),
  /** malformed tool calls, unknown tools, removed tools/parameters used: recorded, the loop goes on */
  anomalies: z.array(z.string()),
  messages: z.array(TrajectoryMessageSchema),
  agentMessages: z.number().int(),
  toolCalls: z.number().int(),
  /**
   * bench CPU time (ms) in the environment, the reference replay and the scoring, excluding the agent and the user
   * simulator: process CPU measured around those sections (with concurrent trials or a model judge it includes
   * whatever overlapped them)
   */
  benchMs: z.number(),
});
export type TrialResult = z.infer<typeof TrialResultSchema>;

export type Runnability = { runnable: true; reason: 'ok'; nav: NavigationDb; reference: ReferenceReplay } | { runnable: false; reason: string };

/** Whether a task can run here: every action names a known tool, every id resolves, and the reference replays cleanly. */
export function checkRunnable(task: Task): Runnability {
  const unknown = task.actions.filter((a) => !toolByName(a.name)).map((a) => a.name);
  if (unknown.length) return { runnable: false, reason: `unknown tool in the task's actions: ${[...new Set(unknown)].join(', ')}` };
  let nav: NavigationDb;
  try {
    nav = NavigationDb.forTask(task, loadMockData());
  } catch (error) {
    if (error instanceof UnresolvableEntityError) return { runnable: false, reason: `synthetic navigation db: ${error.message}` };
    throw error;
  }
  const reference = replayReference(task, nav);
  if (reference.errors.length) return { runnable: false, reason: `the reference actions do not replay cleanly: ${reference.errors.join('; ')}` };
  return { runnable: true, reason: 'ok', nav, reference };
}

/** The agent's system prompt: policy_agent_view.md with the two placeholders filled (scoring.md §1). */
let policyView: string | undefined;
export function systemPromptFor(task: Task): string {
  policyView ??= readFileSync(carbenchPath('policy_agent_view.md'), 'utf8');
  return policyView
    .replace('{{placeholder_location_based_on_task_context_init_config}}', JSON.stringify(task.context_init_config.current_location))
    .replace('{{placeholder_datetime_based_on_task_context_init_config}}', JSON.stringify(task.context_init_config.current_datetime));
}

/** CAR-bench's cross-domain helpers `--planning-and-thinking-tool` offers (run.py default: on); they read nothing and change nothing. */
export const PLANNING_AND_THINKING_TOOLS = ['think', 'planning_tool'] as const;

export interface TrialOptions {
  trial?: number;
  /** offer the agent `think` and `planning_tool` (default true, as CAR-bench's run.py); false withholds them */
  planningAndThinking?: boolean;
  user?: TaskSimulator;
  judge?: PolicyJudge;
  maxAgentMessages?: number;
}

function parseArguments(raw: unknown): { value: unknown; malformed?: string } {
  if (typeof raw !== 'string') {
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) return { value: raw };
    return { value: raw, malformed: `arguments must be a JSON object, got ${Array.isArray(raw) ? 'an array' : typeof raw}` };
  }
  try {
    const value = JSON.parse(raw === '' ? '{}' : raw);
    if (value && typeof value === 'object' && !Array.isArray(value)) return { value };
    return { value: raw, malformed: 'arguments are JSON but not an object' };
  } catch (error) {
    return { value: raw, malformed: `arguments are not JSON: ${(error as Error).message}` };
  }
}

/** Bench CPU time of a trial: process CPU measured around the environment, reference replay and scoring sections. */
class BenchClock {
  ms = 0;
  /** adds the CPU used since `since` (for sections that await) */
  addSince(since: NodeJS.CpuUsage): void {
    const used = process.cpuUsage(since);
    this.ms += (used.user + used.system) / 1000;
  }
  timed<T>(fn: () => T): T {
    const t0 = process.cpuUsage();
    try {
      return fn();
    } finally {
      this.addSince(t0);
    }
  }
}

/** What a trial has recorded so far; the episode's steps add to it and finishTrial turns it into the result. */
interface TrialState {
  messages: TrajectoryMessage[];
  boundaryStates: DynamicState[];
  endFailures: EndFailure[];
  anomalies: string[];
  acknowledged: boolean;
  userKeyword: string | null;
  endedBy: TrialResult['endedBy'] | undefined;
  agentMessages: number;
  toolCalls: number;
}

/** Everything a running trial's steps share. */
interface TrialRun {
  task: Task;
  agent: ToolAgent;
  user: TaskSimulator;
  judge: PolicyJudge | undefined;
  base: Pick<TrialResult, 'taskId' | 'taskType' | 'family' | 'trial' | 'agent' | 'userSimulator' | 'removedPart'>;
  clock: BenchClock;
  env: ToolEnvironment;
  reference: ReferenceReplay;
  state: TrialState;
}

/** How the episode ended: a scored end, or a failure mode with its reason. */
interface EpisodeEnd {
  outcome: TrialResult['outcome'];
  reason: string;
}

/** The tools offered to the agent: the environment's, without think/planning_tool when they are withheld. */
function offeredTools(env: ToolEnvironment, options: TrialOptions): OpenAiTool[] {
  const offered = env.tools();
  return options.planningAndThinking === false ? offered.filter((t) => !(PLANNING_AND_THINKING_TOOLS as readonly string[]).includes(t.function.name)) : offered;
}

/** Tells the agent the trial is over, then scores a scored end (or records the failure mode as reward 0). */
async function finishTrial(run: TrialRun, { outcome, reason }: EpisodeEnd): Promise<TrialResult> {
  const { task, agent, base, clock, env, reference, state } = run;
  const { endedBy, userKeyword, anomalies, messages, agentMessages, toolCalls } = state;
  await agent.end?.(outcome === 'scored' ? `ended by ${endedBy}` : reason).catch(() => undefined);
  if (outcome !== 'scored')
    return { ...base, outcome, reward: 0, reason, endedBy: endedBy ?? 'error', userKeyword, score: null, failures: [reason], anomalies, messages, agentMessages, toolCalls, benchMs: clock.ms };
  const t0 = process.cpuUsage();
  const score = await scoreTrajectory({ task, messages, env, boundaryStates: state.boundaryStates, endFailures: state.endFailures, acknowledged: state.acknowledged, judge: run.judge, reference });
  clock.addSince(t0);
  const failures = describeFailures(score);
  return { ...base, outcome, reward: score.reward, reason: failures.length ? failures[0] : 'all applicable components passed', endedBy: endedBy!, userKeyword, score, failures, anomalies, messages, agentMessages, toolCalls, benchMs: clock.ms };
}

/** Runs one well-formed tool call in the environment, noting removed tools/parameters; true when it terminates the episode. */
function executeToolCall(run: TrialRun, call: ToolCall, step: number): boolean {
  const { env, state } = run;
  if (env.removals.tools.has(call.name)) {
    state.endFailures.push({ keyword: 'HALLUCINATION_ERROR_REMOVED_TOOL', reason: `the agent called the removed tool ${call.name}` });
    state.anomalies.push(`step ${step}: called removed tool ${call.name}`);
  }
  for (const path of env.removals.parameters.get(call.name) ?? []) {
    if (usesRemovedParameter(call.arguments, path)) {
      state.endFailures.push({ keyword: 'HALLUCINATION_ERROR_REMOVED_PARAMETER', reason: `the agent passed the removed parameter ${call.name}.${path.join('.')}` });
      state.anomalies.push(`step ${step}: passed removed parameter ${call.name}.${path.join('.')}`);
    }
  }
  const outcome = env.execute(call.name, call.arguments);
  if (outcome.status === 'unknown_tool') state.anomalies.push(`step ${step}: unknown tool ${call.name}`);
  state.messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: outcome.output, status: outcome.status });
  // the terminate tool ends the episode once it ran, whatever it answered (env.py terminate_tools)
  return Boolean(toolByName(call.name)?.terminates_conversation && (outcome.status === 'success' || outcome.status === 'rejected'));
}

const reasoningOf = (reply: AgentReply): { reasoning?: string } => (reply.reasoning ? { reasoning: reply.reasoning } : {});

/** Records an agent message with tool calls and runs each call as a separate action; true when a terminate tool ran. */
function runToolCalls(run: TrialRun, reply: AgentReply, step: number): boolean {
  const { state } = run;
  const calls: ToolCall[] = reply.toolCalls.map((c, i) => {
    const parsed = parseArguments(c.arguments);
    return { id: c.id ?? `call_${step}_${i}`, name: String(c.name), arguments: parsed.value, ...(parsed.malformed ? { malformed: parsed.malformed } : {}) };
  });
  state.messages.push({ role: 'assistant', content: reply.content, toolCalls: calls, step, ...reasoningOf(reply) });
  let terminated = false;
  for (const call of calls) {
    state.toolCalls++;
    if (call.malformed) {
      state.anomalies.push(`step ${step}: malformed tool call ${call.name}: ${call.malformed}`);
      state.messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: `Error: malformed tool call: ${call.malformed}`, status: 'malformed' });
      continue;
    }
    if (run.clock.timed(() => executeToolCall(run, call, step))) terminated = true;
  }
  return terminated;
}

/** Passes an agent's text reply to the user simulator; the episode's end when the simulator stops, undefined to go on. */
async function answerUser(run: TrialRun, reply: AgentReply, step: number): Promise<EpisodeEnd | undefined> {
  const { task, env, reference, state } = run;
  state.messages.push({ role: 'assistant', content: reply.content, toolCalls: [], step, ...reasoningOf(reply) });
  state.boundaryStates.push(env.snapshot());
  // after an end-of-conversation failure the next simulator turn stops without asking the simulator (user.py:68-73)
  let answer: UserReply;
  try {
    answer = state.endFailures.length ? { text: '###STOP###', keyword: 'STOP' } : await run.user.reply({ task, messages: state.messages, agentText: reply.content, env, reference });
  } catch (error) {
    state.endedBy = 'error';
    return { outcome: 'simulator_error', reason: `the user simulator failed: ${(error as Error).message}` };
  }
  state.userKeyword = answer.keyword;
  if (answer.keyword === 'CONTINUE') {
    state.messages.push({ role: 'user', content: answer.text });
    return undefined;
  }
  if (answer.keyword === 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART') state.acknowledged = true;
  if (answer.keyword === 'OUT_OF_SCOPE' || answer.keyword === 'HALLUCINATION_ERROR' || answer.keyword === 'DISAMBIGUATION_ERROR')
    state.endFailures.push({ keyword: answer.keyword, reason: answer.reason ?? `the user simulator ended with ${answer.keyword}` });
  state.messages.push({ role: 'user', content: '###STOP###' });
  state.endedBy = 'user';
  return { outcome: 'scored', reason: '' };
}

/** The agent/user/tool loop, at most `maxMessages` agent messages; says how the episode ended. */
async function runEpisode(run: TrialRun, systemPrompt: string, tools: OpenAiTool[], maxMessages: number): Promise<EpisodeEnd> {
  const { state } = run;
  while (state.agentMessages < maxMessages) {
    let reply: AgentReply;
    try {
      reply = await run.agent.next({ systemPrompt, tools, messages: state.messages });
    } catch (error) {
      state.endedBy = 'error';
      return { outcome: 'agent_error', reason: `the agent failed: ${(error as Error).message}` };
    }
    state.agentMessages++;
    const step = state.agentMessages - 1;
    if (reply.toolCalls.length) {
      if (runToolCalls(run, reply, step)) {
        state.endedBy = 'terminate_tool';
        return { outcome: 'scored', reason: '' };
      }
      continue;
    }
    const end = await answerUser(run, reply, step);
    if (end) return end;
  }
  state.endedBy = 'max_messages';
  return { outcome: 'max_messages', reason: `no end after ${maxMessages} agent messages (CAR-bench gives reward 0 and no reward info)` };
}

/**
 * Runs one trial of a task with an agent, the CAR-bench way (orchestrator.py): at most 40 agent messages; a message
 * with tool calls becomes one action per call; a message without becomes a reply to the user simulator; the episode
 * ends on the simulator's stop or a terminate tool, and is then scored. Every failure mode is a recorded outcome.
 */
export async function runToolTaskTrial(task: Task, agent: ToolAgent, options: TrialOptions = {}): Promise<TrialResult> {
  const trial = options.trial ?? 0;
  const user = options.user ?? new DeterministicTaskUser();
  const maxMessages = options.maxAgentMessages ?? MAX_AGENT_MESSAGES;
  const base = { taskId: task.task_id, taskType: task.task_type, family: taskFamily(task.task_type), trial, agent: agent.name, userSimulator: user.name, ...(task.removed_part?.length ? { removedPart: task.removed_part } : {}) };
  const clock = new BenchClock();

  const runnable = clock.timed(() => checkRunnable(task));
  if (!runnable.runnable)
    return { ...base, outcome: 'not_runnable', reward: null, reason: runnable.reason, endedBy: 'not_run', userKeyword: null, score: null, failures: [], anomalies: [], messages: [], agentMessages: 0, toolCalls: 0, benchMs: clock.ms };

  const reference = runnable.reference;
  const env = clock.timed(() => ToolEnvironment.forTask(task, { nav: runnable.nav }));
  const systemPrompt = systemPromptFor(task);
  const tools = offeredTools(env, options);
  let openingText: string;
  try {
    openingText = await user.opening(task);
  } catch (error) {
    return { ...base, outcome: 'simulator_error', reward: 0, reason: `the user simulator failed: ${(error as Error).message}`, endedBy: 'error', userKeyword: null, score: null, failures: [], anomalies: [], messages: [], agentMessages: 0, toolCalls: 0, benchMs: clock.ms };
  }
  const state: TrialState = {
    messages: [{ role: 'user', content: openingText }],
    boundaryStates: [env.snapshot()],
    endFailures: [],
    anomalies: [],
    acknowledged: false,
    userKeyword: null,
    endedBy: undefined,
    agentMessages: 0,
    toolCalls: 0,
  };
  try {
    agent.begin?.(task);
  } catch (error) {
    return { ...base, outcome: 'agent_error', reward: 0, reason: `the agent could not start: ${(error as Error).message}`, endedBy: 'error', userKeyword: null, score: null, failures: [], anomalies: [], messages: state.messages, agentMessages: 0, toolCalls: 0, benchMs: clock.ms };
  }
  const run: TrialRun = { task, agent, user, judge: options.judge, base, clock, env, reference, state };
  return finishTrial(run, await runEpisode(run, systemPrompt, tools, maxMessages));
}
