import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseOrThrow } from '../../domain/validation.ts';
import { generateStructured } from '../../llm/structured.ts';
import type { ChatMessage, LlmProvider } from '../../llm/types.ts';
import type { LlmUsageTracker } from '../../llm/usage.ts';
import type { ToolEnvironment } from '../../toolenv/env.ts';
import { carbenchPath } from '../../toolenv/paths.ts';
import { stateKey } from '../../toolenv/state.ts';
import type { ReferenceReplay } from './scoring.ts';
import type { Task } from '../../toolenv/tasks.ts';
import { toolSteps, type TrajectoryMessage } from './trajectory.ts';

/** The control keywords of CAR-bench's user simulator (user_simulator.md). */
export const USER_KEYWORDS = ['CONTINUE', 'STOP', 'OUT_OF_SCOPE', 'HALLUCINATION_ERROR', 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART', 'DISAMBIGUATION_ERROR'] as const;
export const UserReplySchema = z.object({ text: z.string(), keyword: z.enum(USER_KEYWORDS), reason: z.string().optional() });
export type UserReply = z.infer<typeof UserReplySchema>;

export interface UserTurnInput {
  task: Task;
  messages: readonly TrajectoryMessage[];
  /** the agent's latest text to the user */
  agentText: string;
  env: ToolEnvironment;
  reference: ReferenceReplay;
}

export interface TaskSimulator {
  readonly name: string;
  opening(task: Task): Promise<string> | string;
  reply(input: UserTurnInput): Promise<UserReply> | UserReply;
}

const ADMITS = /\b(cannot|can't|can not|unable|not able|not available|unavailable|not possible|not supported|don't have|do not have|no (?:tool|function|way|access)|unknown)\b/i;
/** Whether the agent's text admits it cannot do or does not know something (how the deterministic user hears an acknowledgement). */
export const admitsLimitation = (text: string): boolean => ADMITS.test(text);
const YES_NO_START = /^(shall|should|may|can|could|would|will|do|does|is|are|please confirm|confirm)\b/i;
const WH_START = /^(what|which|how|where|when|who|whom|whose|why)\b/i;

/**
 * A confirmation request is a yes/no question (the last question sentence starts like "Shall I …", "Do you want me
 * to …", "Confirm …", or mentions proceeding) that offers no alternatives; any other question asks the user to choose.
 */
export function isConfirmationRequest(text: string): boolean {
  const questions = text.split(/(?<=[.!?])\s+/).filter((s) => s.includes('?'));
  const last = questions.at(-1)?.trim();
  if (!last || WH_START.test(last) || /\bor\b/i.test(last)) return false;
  return YES_NO_START.test(last) || /\b(proceed|go ahead|confirm)\b/i.test(last);
}
const MAX_NUDGES = 3;

/**
 * The deterministic tier: states the task's instruction, answers clarification questions from the task's
 * disambiguation elements and reference actions, confirms when asked, and stops when the goal state is reached
 * (the reference final state, with every reference tool called). Hallucination tasks end acknowledged when the
 * agent says it cannot do something, and with HALLUCINATION_ERROR when it claims success instead.
 * disambiguation_internal tasks end with DISAMBIGUATION_ERROR when the agent asks the user to choose.
 */
export class DeterministicTaskUser implements TaskSimulator {
  readonly name = 'deterministic';
  private nudges = 0;

  opening(task: Task): string {
    this.nudges = 0;
    return task.instruction;
  }

  reply({ task, messages, agentText, env, reference }: UserTurnInput): UserReply {
    const asks = agentText.includes('?');
    const confirmation = asks && isConfirmationRequest(agentText);
    const type = task.task_type;
    if (type.startsWith('hallucination')) {
      if (admitsLimitation(agentText)) return { text: 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART', keyword: 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART' };
      if (confirmation) return { text: 'Yes, please go ahead.', keyword: 'CONTINUE' };
      if (asks) return { text: this.clarification(task), keyword: 'CONTINUE' };
      return { text: 'HALLUCINATION_ERROR', keyword: 'HALLUCINATION_ERROR', reason: 'the assistant reported success without acknowledging the missing capability or information' };
    }
    if (asks && !confirmation) {
      if (type === 'disambiguation_internal')
        return { text: 'DISAMBIGUATION_ERROR', keyword: 'DISAMBIGUATION_ERROR', reason: `the assistant asked the user about "${task.disambiguation_element_internal}", which it should resolve itself` };
      return { text: this.clarification(task), keyword: 'CONTINUE' };
    }
    if (confirmation) return { text: 'Yes, please go ahead.', keyword: 'CONTINUE' };
    const called = new Set(toolSteps(messages).flatMap((s) => s.toolCalls.map((c) => c.name)));
    const goal = env.stateKey() === stateKey(reference.final) && task.actions.every((a) => called.has(a.name));
    if (goal || ++this.nudges > MAX_NUDGES) return { text: '###STOP###', keyword: 'STOP' };
    return { text: `That is not everything I asked for. ${task.instruction}`, keyword: 'CONTINUE' };
  }

  /** The answer to a clarification question: the disambiguation element and the reference's state-changing calls. */
  private clarification(task: Task): string {
    const wanted = task.actions.filter((a) => /^(set_|open_close_|navigation_|send_email|call_phone|delete_current)/.test(a.name));
    const element = task.disambiguation_element_user ?? task.disambiguation_element_internal ?? 'my request';
    return `About ${element}: I want ${wanted.map((a) => `${a.name} with ${JSON.stringify(a.kwargs)}`).join(', then ') || 'what I said'}.`;
  }
}

const UserSimulatorDataSchema = z.object({
  first_message_to_simulator: z.object({ role: z.literal('user'), content: z.string() }),
  stop_sentinel: z.string(),
  response_model_by_task_type: z.record(z.string(), z.string()),
  prompts: z.record(z.string(), z.string()),
  response_schemas: z.record(z.string(), z.record(z.string(), z.unknown())),
});
let simulatorData: z.infer<typeof UserSimulatorDataSchema> | undefined;
function loadSimulatorData() {
  if (!simulatorData) {
    const path = carbenchPath('user_simulator.json');
    simulatorData = parseOrThrow(UserSimulatorDataSchema, JSON.parse(readFileSync(path, 'utf8')), path);
  }
  return simulatorData;
}

/** Python's str() of a list of strings, as CAR-bench fills {removed_part}. */
function pythonList(items: readonly string[] | null): string {
  return `[${(items ?? []).map((i) => `'${i.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`).join(', ')}]`;
}

/** CAR-bench's user-simulator system prompt for a task (user_simulator.md; persona/scenario blocks left out when null). */
export function simulatorPrompt(task: Task): string {
  const data = loadSimulatorData();
  const template = data.prompts[task.task_type];
  if (!template) throw new Error(`user_simulator.json has no prompt for task type ${task.task_type}`);
  return template
    .replace('{persona}', task.persona)
    .replace('{instruction}', task.instruction)
    .replace('{removed_part}', pythonList(task.removed_part))
    .replace('{disambiguation_element_internal}', task.disambiguation_element_internal ?? '');
}

const LlmUserOutputSchema = z.looseObject({ user_message: z.string(), conversation_control_keyword: z.string() });

/**
 * The LLM tier: CAR-bench's simulator prompt and response schema per task type through a src/llm provider at
 * temperature 0. The agent's utterances go to the model as `user` messages, its own replies as `assistant`
 * (user.py). A keyword outside the task type's set is treated as CONTINUE, as in CAR-bench. One instance per trial.
 */
export class LlmTaskUser implements TaskSimulator {
  readonly name: string;
  private history: ChatMessage[] = [];

  constructor(
    private readonly provider: LlmProvider,
    /** every call recorded with its usage (the run's `llm.calls`) */
    private readonly options: { tracker?: LlmUsageTracker | null; maxRetries?: number } = {},
  ) {
    this.name = `llm:${provider.ref}`;
  }

  private async ask(task: Task): Promise<UserReply> {
    const data = loadSimulatorData();
    const model = data.response_model_by_task_type[task.task_type];
    const schema = model ? data.response_schemas[model] : undefined;
    if (!schema) throw new Error(`user_simulator.json has no response schema for task type ${task.task_type}`);
    const result = await generateStructured(this.provider, { messages: this.history, temperature: 0 }, LlmUserOutputSchema, { kind: 'simulator', schemaName: model, jsonSchema: schema, tracker: this.options.tracker ?? undefined, maxRetries: this.options.maxRetries });
    if (!result.ok) throw new Error(`user simulator: ${result.error.message}`);
    const out = result.value;
    this.history.push({ role: 'assistant', content: JSON.stringify(out) });
    const allowed = (schema.properties as { conversation_control_keyword?: { enum?: string[] } } | undefined)?.conversation_control_keyword?.enum ?? [];
    const keyword = allowed.includes(out.conversation_control_keyword) ? (out.conversation_control_keyword as UserReply['keyword']) : 'CONTINUE';
    const reasoning = Object.entries(out).find(([k]) => k.startsWith('reasoning'))?.[1];
    return { text: keyword === 'CONTINUE' ? out.user_message : keyword, keyword, reason: typeof reasoning === 'string' ? reasoning : undefined };
  }

  async opening(task: Task): Promise<string> {
    const data = loadSimulatorData();
    this.history = [
      { role: 'system', content: simulatorPrompt(task) },
      { role: 'user', content: data.first_message_to_simulator.content },
    ];
    return (await this.ask(task)).text;
  }

  async reply(input: UserTurnInput): Promise<UserReply> {
    this.history.push({ role: 'user', content: input.agentText });
    return this.ask(input.task);
  }
}
