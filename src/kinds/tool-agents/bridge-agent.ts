import type { z } from 'zod';
import { describeZodError } from '../../domain/validation.ts';
import type { BridgeHeadUnitConnection } from '../../bridge/connection.ts';
import { SutError } from '../../headunit/types.ts';
import {
  TOOL_EVENTS,
  TOOLS_PROTOCOL,
  ToolAssistantTextSchema,
  ToolCallMessageSchema,
  ToolSessionReadySchema,
  type ToolResultMessage,
  type ToolSessionStart,
} from '../../protocol/tools.ts';
import type { AgentReply, AgentTurnInput, ToolAgent } from './loop.ts';
import type { Task } from '../../toolenv/tasks.ts';

type UnitMessage = { kind: 'ready' } | { kind: 'calls'; step: number; reply: AgentReply } | { kind: 'text'; reply: AgentReply };

interface Waiting {
  resolve(message: UnitMessage): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The bench side of icabench-tools/1 on one bridge connection: routes the unit's tool_session_ready, tool_call and
 * tool_assistant_text messages to the session waiting for them. One channel per connection.
 */
class ToolChannel {
  private readonly waiting = new Map<string, Waiting>();
  /** links lost so far: a session begun on an earlier link is gone (the unit lost its state with the link) */
  linksLost = 0;
  lastLoss = '';

  constructor(readonly connection: BridgeHeadUnitConnection) {
    const solicited = (payload: unknown) => {
      const id = (payload as { sessionId?: unknown } | null)?.sessionId;
      return typeof id === 'string' && this.waiting.has(id);
    };
    connection.listenExtension(TOOL_EVENTS.sessionReady, solicited, (p) => this.deliver(p, ToolSessionReadySchema, () => ({ kind: 'ready' })));
    connection.listenExtension(TOOL_EVENTS.toolCall, solicited, (p) =>
      this.deliver(p, ToolCallMessageSchema, (m) => ({ kind: 'calls', step: m.step, reply: { content: '', toolCalls: m.calls.map((c) => ({ id: c.callId, name: c.name, arguments: c.arguments })) } })),
    );
    connection.listenExtension(TOOL_EVENTS.assistantText, solicited, (p) => this.deliver(p, ToolAssistantTextSchema, (m) => ({ kind: 'text', reply: { content: m.text, toolCalls: [] } })));
    // a session's state is gone with the link: its waiting request fails now, not at its timeout
    connection.onLinkLost((why) => {
      this.linksLost += 1;
      this.lastLoss = why;
      for (const [id, waiting] of this.waiting) {
        this.waiting.delete(id);
        clearTimeout(waiting.timer);
        waiting.reject(new SutError('disconnected', `${why}; tool session ${id} is lost`));
      }
    });
  }

  private deliver<S extends z.ZodType>(payload: unknown, schema: S, map: (m: z.output<S>) => UnitMessage): void {
    const id = (payload as { sessionId?: unknown } | null)?.sessionId;
    const waiting = typeof id === 'string' ? this.waiting.get(id) : undefined;
    if (!waiting) return;
    this.waiting.delete(id as string);
    clearTimeout(waiting.timer);
    const parsed = schema.safeParse(payload);
    if (!parsed.success) waiting.reject(new SutError('malformed', `icabench-tools/1 message for session ${id as string}: ${describeZodError(parsed.error)}`));
    else waiting.resolve(map(parsed.data));
  }

  request(sessionId: string, event: string, payload: unknown, timeoutMs: number): Promise<UnitMessage> {
    return new Promise<UnitMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(sessionId);
        reject(new SutError('timeout', `head unit sent nothing for tool session ${sessionId} within ${timeoutMs} ms after ${event}`));
      }, timeoutMs);
      this.waiting.set(sessionId, { resolve, reject, timer });
      try {
        this.connection.emitExtension(event, payload);
      } catch (error) {
        clearTimeout(timer);
        this.waiting.delete(sessionId);
        reject(error as Error);
      }
    });
  }
}

const channels = new WeakMap<BridgeHeadUnitConnection, ToolChannel>();
let sessionCounter = 0;

/** A head unit over the bridge as a tool-using agent, for one trial at a time. */
export interface BridgeToolAgent extends ToolAgent {
  /** why the unit's link was lost during the current trial (its result is then about the link, not the agent), or null */
  linkLost(): string | null;
}

/**
 * A head unit over the bridge as a tool-using agent: every agent turn of the loop becomes an icabench-tools/1
 * exchange. The unit must have announced `capabilities.tools`. A trial whose link went away fails with SutError
 * `disconnected` and says so through `linkLost()` (the runner runs it again once the unit is back).
 */
export function bridgeToolAgent(connection: BridgeHeadUnitConnection, options: { timeoutMs?: number } = {}): BridgeToolAgent {
  const timeoutMs = options.timeoutMs ?? 15_000;
  let channel = channels.get(connection);
  if (!channel) {
    channel = new ToolChannel(connection);
    channels.set(connection, channel);
  }
  const ch = channel;
  let sessionId = '';
  let task: Task | undefined;
  let started = false;
  let turn = -1;
  let pendingStep: number | null = null;
  let lost: string | null = null;
  let linkAtBegin = 0;
  /** a request of this trial; a link lost meanwhile (now or since the session began) is noted and fails it */
  const request = async (event: string, payload: unknown): Promise<UnitMessage> => {
    try {
      if (ch.linksLost !== linkAtBegin) throw new SutError('disconnected', `${ch.lastLoss}; tool session ${sessionId} is lost`);
      return await ch.request(sessionId, event, payload, timeoutMs);
    } catch (error) {
      if (error instanceof SutError && error.kind === 'disconnected') lost ??= error.message;
      throw error;
    }
  };
  return {
    get name() {
      return connection.describe;
    },
    linkLost: () => lost,
    begin(t: Task) {
      lost = null;
      linkAtBegin = ch.linksLost;
      let tools: boolean;
      try {
        tools = connection.capabilities().tools === true;
      } catch (error) {
        if (error instanceof SutError && error.kind === 'disconnected') lost = error.message;
        throw error;
      }
      if (!tools) throw new SutError('rejected', `${connection.describe} did not announce capabilities.tools (icabench-tools/1)`);
      task = t;
      sessionId = `tools-${t.task_id}-${++sessionCounter}`;
      started = false;
      turn = -1;
      pendingStep = null;
    },
    async next(input: AgentTurnInput): Promise<AgentReply> {
      if (!started) {
        const start: ToolSessionStart = { protocol: TOOLS_PROTOCOL, sessionId, systemPrompt: input.systemPrompt, tools: input.tools, ...(task ? { task: { id: task.task_id, type: task.task_type } } : {}) };
        const ready = await request(TOOL_EVENTS.sessionStart, start);
        if (ready.kind !== 'ready') throw new SutError('malformed', `expected tool_session_ready for ${sessionId}`);
        started = true;
      }
      const last = input.messages.at(-1);
      let answer: UnitMessage;
      if (last?.role === 'tool' && pendingStep !== null) {
        const lastAssistant = input.messages.findLastIndex((m) => m.role === 'assistant');
        const results: ToolResultMessage['results'] = input.messages
          .slice(lastAssistant + 1)
          .flatMap((m) => (m.role === 'tool' ? [{ callId: m.toolCallId, name: m.name, output: m.content, status: m.status }] : []));
        answer = await request(TOOL_EVENTS.toolResult, { sessionId, turn, step: pendingStep, results } satisfies ToolResultMessage);
      } else if (last?.role === 'user') {
        turn += 1;
        answer = await request(TOOL_EVENTS.userTurn, { sessionId, turn, text: last.content });
      } else throw new Error(`bridge tool agent: nothing to send for session ${sessionId}`);
      if (answer.kind === 'ready') throw new SutError('malformed', `unexpected tool_session_ready in session ${sessionId}`);
      pendingStep = answer.kind === 'calls' ? answer.step : null;
      return answer.reply;
    },
    async end(reason: string) {
      if (started && !lost && connection.connected) connection.emitExtension(TOOL_EVENTS.sessionEnd, { sessionId, reason });
    },
  };
}
