import { z } from 'zod';

/** One tool call as an agent issued it; `arguments` is the parsed JSON object, or the raw text when it did not parse. */
export const ToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  arguments: z.unknown(),
  /** set when the agent's argument text was not a JSON object */
  malformed: z.string().optional(),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const TrajectoryMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(ToolCallSchema),
    step: z.number().int().nonnegative(),
    /** the model's own reasoning when it ran in a reasoning mode and its server returned it (never sent back to the model) */
    reasoning: z.string().optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    name: z.string(),
    content: z.string(),
    status: z.enum(['success', 'rejected', 'invalid', 'unknown_tool', 'malformed']),
  }),
]);
export type TrajectoryMessage = z.infer<typeof TrajectoryMessageSchema>;
export type AssistantMessage = Extract<TrajectoryMessage, { role: 'assistant' }>;

/** The assistant messages that carried tool calls, in order (the "steps" the policy scan walks). */
export function toolSteps(messages: readonly TrajectoryMessage[]): AssistantMessage[] {
  return messages.filter((m): m is AssistantMessage => m.role === 'assistant' && m.toolCalls.length > 0);
}
