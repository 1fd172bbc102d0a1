import { EVENTS } from './protocol/bridge.ts';
import {
  TOOL_EVENTS,
  ToolResultMessageSchema,
  ToolSessionEndSchema,
  ToolSessionStartSchema,
  ToolUserTurnSchema,
  type OpenAiTool,
  type ToolResultMessage,
  type ToolSessionStart,
} from './protocol/tools.ts';
import type { BridgeClientExtension } from './client.ts';
import { describeZodError } from './validation.ts';

/** The conversation of one tool session as the unit's assistant sees it (OpenAI chat roles). */
export type ToolConversationMessage =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls: Array<{ id: string; name: string; arguments: unknown }>; step: number }
  | { role: 'tool'; toolCallId: string; name: string; content: string; status: ToolResultMessage['results'][number]['status'] };

/** What the unit's assistant answers: text for the user, or tool calls for the bench to run (then it is asked again). */
export interface ToolAssistantReply {
  content: string;
  /** `arguments`: a JSON object (or JSON text); `id` is made up when absent */
  toolCalls: Array<{ id?: string; name: string; arguments: unknown }>;
}

/** The unit's tool-using assistant: one call per agent message, with the whole session so far. */
export interface ToolAssistant {
  next(input: { systemPrompt: string; tools: OpenAiTool[]; messages: readonly ToolConversationMessage[] }): Promise<ToolAssistantReply>;
}

type Emit = (event: string, payload: unknown) => void;

/**
 * The head-unit side of icabench-tools/1 (docs/bridge-protocol.md, "Tool extension"): keeps each tool session's
 * conversation, asks `assistantFor(start)`'s assistant for the next agent message after every user turn and every
 * tool_result, and sends its tool calls (tool_call, numbered steps) or its text (tool_assistant_text, ends the
 * turn). Pass the result as `extensions` to connectHeadUnit; it adds `capabilities.tools: true` to hello.
 */
export function toolsExtension(assistantFor: (start: ToolSessionStart) => ToolAssistant): BridgeClientExtension {
  const sessions = new Map<string, { start: ToolSessionStart; assistant: ToolAssistant; messages: ToolConversationMessage[]; turn: number; step: number }>();
  const invalid = (emit: Emit, event: string, details: string, sessionId?: string) => emit(EVENTS.error, { sessionId, code: 'invalid_message', message: `${event}: ${details}` });

  async function act(sessionId: string, emit: Emit): Promise<void> {
    const s = sessions.get(sessionId);
    if (!s) return;
    let reply: ToolAssistantReply;
    try {
      reply = await s.assistant.next({ systemPrompt: s.start.systemPrompt, tools: s.start.tools, messages: s.messages });
    } catch (error) {
      // the unit's assistant failed: say so; the bench records the turn as timed out (agent_error)
      emit(EVENTS.error, { sessionId, code: 'internal', message: `tool assistant failed: ${(error as Error).message}` });
      return;
    }
    if (reply.toolCalls.length) {
      const step = s.step++;
      const calls = reply.toolCalls.map((c, i) => ({ callId: c.id ?? `unit_${step}_${i}`, name: c.name, arguments: c.arguments }));
      s.messages.push({ role: 'assistant', content: reply.content, toolCalls: calls.map((c) => ({ id: c.callId, name: c.name, arguments: c.arguments })), step });
      emit(TOOL_EVENTS.toolCall, { sessionId, turn: s.turn, step, calls });
    } else {
      s.messages.push({ role: 'assistant', content: reply.content, toolCalls: [], step: s.step++ });
      emit(TOOL_EVENTS.assistantText, { sessionId, turn: s.turn, text: reply.content });
    }
  }

  return {
    capabilities: { tools: true },
    handlers: {
      [TOOL_EVENTS.sessionStart]: (payload, emit) => {
        const parsed = ToolSessionStartSchema.safeParse(payload);
        if (!parsed.success) return invalid(emit, TOOL_EVENTS.sessionStart, describeZodError(parsed.error));
        let assistant: ToolAssistant;
        try {
          assistant = assistantFor(parsed.data);
        } catch (error) {
          return emit(EVENTS.error, { sessionId: parsed.data.sessionId, code: 'internal', message: (error as Error).message });
        }
        sessions.set(parsed.data.sessionId, { start: parsed.data, assistant, messages: [], turn: 0, step: 0 });
        emit(TOOL_EVENTS.sessionReady, { sessionId: parsed.data.sessionId });
      },
      [TOOL_EVENTS.userTurn]: async (payload, emit) => {
        const parsed = ToolUserTurnSchema.safeParse(payload);
        if (!parsed.success) return invalid(emit, TOOL_EVENTS.userTurn, describeZodError(parsed.error));
        const s = sessions.get(parsed.data.sessionId);
        if (!s) return emit(EVENTS.error, { sessionId: parsed.data.sessionId, code: 'unknown_session', message: `${TOOL_EVENTS.userTurn}: no tool session ${parsed.data.sessionId}` });
        s.turn = parsed.data.turn;
        s.messages.push({ role: 'user', content: parsed.data.text });
        await act(parsed.data.sessionId, emit);
      },
      [TOOL_EVENTS.toolResult]: async (payload, emit) => {
        const parsed = ToolResultMessageSchema.safeParse(payload);
        if (!parsed.success) return invalid(emit, TOOL_EVENTS.toolResult, describeZodError(parsed.error));
        const s = sessions.get(parsed.data.sessionId);
        if (!s) return emit(EVENTS.error, { sessionId: parsed.data.sessionId, code: 'unknown_session', message: `${TOOL_EVENTS.toolResult}: no tool session ${parsed.data.sessionId}` });
        for (const r of parsed.data.results) s.messages.push({ role: 'tool', toolCallId: r.callId, name: r.name, content: r.output, status: r.status });
        await act(parsed.data.sessionId, emit);
      },
      [TOOL_EVENTS.sessionEnd]: (payload) => {
        const parsed = ToolSessionEndSchema.safeParse(payload);
        if (parsed.success) sessions.delete(parsed.data.sessionId);
      },
    },
  };
}
