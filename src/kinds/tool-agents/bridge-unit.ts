import { describeZodError } from '../../domain/validation.ts';
import { EVENTS } from '../../protocol/bridge.ts';
import type { BridgeClientExtension } from '../../bridge/client.ts';
import { TOOL_EVENTS, ToolResultMessageSchema, ToolSessionEndSchema, ToolSessionStartSchema, ToolUserTurnSchema, type ToolSessionStart } from '../../protocol/tools.ts';
import { createEndpointAgent } from './endpoint.ts';
import type { ToolAgent } from './loop.ts';
import { ReplayAgent } from './replay.ts';
import { loadTaskFile, VENDORED_TASK_FILES } from './tasks.ts';
import type { TrajectoryMessage } from './trajectory.ts';

/**
 * The head-unit side of icabench-tools/1: runs a ToolAgent (the replay agent, an endpoint model, a vendor adapter)
 * inside the unit; the bench's environment is the car. Pass the result as `extensions` to connectHeadUnit.
 */
export function toolUnitExtension(agentFor: (start: ToolSessionStart) => ToolAgent): BridgeClientExtension {
  const sessions = new Map<string, { start: ToolSessionStart; agent: ToolAgent; messages: TrajectoryMessage[]; turn: number; step: number }>();
  const invalid = (emit: (e: string, p: unknown) => void, event: string, details: string, sessionId?: string) =>
    emit(EVENTS.error, { sessionId, code: 'invalid_message', message: `${event}: ${details}` });

  async function act(sessionId: string, emit: (e: string, p: unknown) => void): Promise<void> {
    const s = sessions.get(sessionId);
    if (!s) return;
    let reply;
    try {
      reply = await s.agent.next({ systemPrompt: s.start.systemPrompt, tools: s.start.tools, messages: s.messages });
    } catch (error) {
      // the unit's assistant failed: say so; the bench records the turn as timed out (agent_error)
      emit(EVENTS.error, { sessionId, code: 'internal', message: `tool agent failed: ${(error as Error).message}` });
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
        let agent: ToolAgent;
        try {
          agent = agentFor(parsed.data);
        } catch (error) {
          return emit(EVENTS.error, { sessionId: parsed.data.sessionId, code: 'internal', message: (error as Error).message });
        }
        sessions.set(parsed.data.sessionId, { start: parsed.data, agent, messages: [], turn: 0, step: 0 });
        emit(TOOL_EVENTS.sessionReady, { sessionId: parsed.data.sessionId });
      },
      [TOOL_EVENTS.userTurn]: async (payload, emit) => {
        const parsed = ToolUserTurnSchema.safeParse(payload);
        if (!parsed.success) return invalid(emit, TOOL_EVENTS.userTurn, describeZodError(parsed.error));
        const s = sessions.get(parsed.data.sessionId);
        if (!s) return invalid(emit, TOOL_EVENTS.userTurn, 'unknown session', parsed.data.sessionId);
        s.turn = parsed.data.turn;
        s.messages.push({ role: 'user', content: parsed.data.text });
        await act(parsed.data.sessionId, emit);
      },
      [TOOL_EVENTS.toolResult]: async (payload, emit) => {
        const parsed = ToolResultMessageSchema.safeParse(payload);
        if (!parsed.success) return invalid(emit, TOOL_EVENTS.toolResult, describeZodError(parsed.error));
        const s = sessions.get(parsed.data.sessionId);
        if (!s) return invalid(emit, TOOL_EVENTS.toolResult, 'unknown session', parsed.data.sessionId);
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

/**
 * The agent a reference head unit runs for `icabench headunit --tool-agent <spec>`: `replay` replays the vendored
 * CAR-bench task named in tool_session_start (a reference unit for testing the bench itself), anything else is a
 * model reference (`ollama:<model>`, `openai-compat:<url>#<model>`) answering with tool calls.
 */
export function toolAgentFactory(spec: string, taskFiles: string[] = VENDORED_TASK_FILES): (start: ToolSessionStart) => ToolAgent {
  if (spec === 'replay') {
    const tasks = new Map(taskFiles.flatMap((f) => loadTaskFile(f)).map((t) => [t.task_id, t]));
    return (start) => {
      const task = start.task ? tasks.get(start.task.id) : undefined;
      if (!task) throw new Error(`replay tool agent: tool_session_start names no known task (${start.task?.id ?? 'none'})`);
      const agent = new ReplayAgent();
      agent.begin(task);
      return agent;
    };
  }
  createEndpointAgent(spec); // validates the reference now, not at the first session
  return () => createEndpointAgent(spec);
}
