import type { ToolSessionStart } from '../../protocol/tools.ts';
import { createEndpointAgent } from './endpoint.ts';
import type { ToolAgent } from './loop.ts';
import { ReplayAgent } from './replay.ts';
import { loadTaskFile, VENDORED_TASK_FILES } from '../../toolenv/tasks.ts';

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
