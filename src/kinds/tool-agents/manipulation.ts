import { examineString, examineUnitOutput, type ManipulationFinding } from '../../domain/manipulation.ts';
import type { TrajectoryMessage } from './trajectory.ts';

/**
 * Where a tool agent addresses the bench instead of the user: every assistant message (free text) and every tool
 * call's name and arguments (data fields, where no instruction belongs), walked string by string. The user's
 * messages and the tool results come from the bench and are not examined. Fields are named by their place in the
 * trajectory ("messages[3].toolCalls[0].arguments.content_message").
 */
export function trajectoryManipulation(messages: readonly TrajectoryMessage[]): ManipulationFinding[] {
  return messages.flatMap((message, i) => {
    if (message.role !== 'assistant') return [];
    return [
      ...examineString(message.content, `messages[${i}].content`, 'free'),
      ...message.toolCalls.flatMap((call, j) => examineUnitOutput({ name: call.name, arguments: call.arguments, ...(call.malformed !== undefined ? { malformed: call.malformed } : {}) }, { path: `messages[${i}].toolCalls[${j}]` })),
    ];
  });
}
