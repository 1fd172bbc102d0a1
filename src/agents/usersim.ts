import { z } from 'zod';
import type { ToolEnvironment } from '../toolenv/env.ts';
import { stateKey } from '../toolenv/state.ts';
import type { ReferenceReplay } from './scoring.ts';
import type { Task } from './tasks.ts';
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

export interface TaskUserSimulator {
  readonly name: string;
  opening(task: Task): Promise<string> | string;
  reply(input: UserTurnInput): Promise<UserReply> | UserReply;
}

const ADMITS = /\b(cannot|can't|can not|unable|not able|not available|unavailable|not possible|not supported|don't have|do not have|no (?:tool|function|way|access)|unknown)\b/i;
const CONFIRMATION_ASK = /\b(shall i|should i|do you want me to|may i|can i|confirm|proceed|go ahead)\b/i;
const MAX_NUDGES = 3;

/**
 * The deterministic tier: states the task's instruction, answers clarification questions from the task's
 * disambiguation elements and reference actions, confirms when asked, and stops when the goal state is reached
 * (the reference final state, with every reference tool called). Hallucination tasks end acknowledged when the
 * agent says it cannot do something, and with HALLUCINATION_ERROR when it claims success instead.
 * disambiguation_internal tasks end with DISAMBIGUATION_ERROR when the agent asks the user to choose.
 */
export class DeterministicTaskUser implements TaskUserSimulator {
  readonly name = 'deterministic';
  private nudges = 0;

  opening(task: Task): string {
    return task.instruction;
  }

  reply({ task, messages, agentText, env, reference }: UserTurnInput): UserReply {
    const asks = agentText.includes('?');
    const confirmation = asks && CONFIRMATION_ASK.test(agentText);
    const type = task.task_type;
    if (type.startsWith('hallucination')) {
      if (ADMITS.test(agentText)) return { text: 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART', keyword: 'ASSISTANT_ACKNOWLEDGED_REMOVED_PART' };
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
