import { z } from 'zod';

/** A JSON-schema node as found in tool definitions (the subset CAR-bench's tool schemas use). */
export interface JsonSchemaNode {
  type?: string | string[];
  description?: string;
  /** values are nodes; calculate_datetime's schema lists a boolean `additionalProperties` among them (a CAR-bench quirk) */
  properties?: Record<string, JsonSchemaNode | boolean>;
  required?: string[];
  items?: JsonSchemaNode;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  multipleOf?: number;
  additionalProperties?: boolean | JsonSchemaNode;
  [key: string]: unknown;
}
export const JsonSchemaNodeSchema: z.ZodType<JsonSchemaNode> = z.lazy(() =>
  z
    .object({
      type: z.union([z.string(), z.array(z.string())]).optional(),
      description: z.string().optional(),
      properties: z.record(z.string(), z.union([JsonSchemaNodeSchema, z.boolean()])).optional(),
      required: z.array(z.string()).optional(),
      items: JsonSchemaNodeSchema.optional(),
      enum: z.array(z.unknown()).optional(),
      minimum: z.number().optional(),
      maximum: z.number().optional(),
      multipleOf: z.number().optional(),
    })
    .passthrough(),
) as z.ZodType<JsonSchemaNode>;

/** One tool as offered to the unit's assistant: an OpenAI function-calling schema. */
export const OpenAiToolSchema = z.object({
  type: z.literal('function'),
  function: z.object({ name: z.string().min(1), description: z.string(), parameters: JsonSchemaNodeSchema }),
});
export type OpenAiTool = z.infer<typeof OpenAiToolSchema>;

/**
 * icabench-tools/1: the bridge extension that lets a head unit's assistant act on the bench's simulated car. The
 * bench offers the tools at session start, the unit answers each user turn with tool calls (`tool_call`, one
 * message per agent message, parallel calls together) that the bench executes in its tool environment and answers
 * with `tool_result`, until the unit sends its text for the user (`tool_assistant_text`). The unit announces the
 * extension with `capabilities.tools: true` in hello. docs/bridge-protocol.md, section "Tool extension".
 */
export const TOOLS_PROTOCOL = 'icabench-tools/1';

export const TOOL_EVENTS = {
  sessionStart: 'tool_session_start',
  sessionReady: 'tool_session_ready',
  userTurn: 'tool_user_turn',
  toolCall: 'tool_call',
  toolResult: 'tool_result',
  assistantText: 'tool_assistant_text',
  sessionEnd: 'tool_session_end',
} as const;

const SessionId = z.string().min(1).max(200);

/** bench → unit: the tool offer. `task` names the task for reference units that replay it; real units ignore it. */
export const ToolSessionStartSchema = z.object({
  protocol: z.literal(TOOLS_PROTOCOL),
  sessionId: SessionId,
  systemPrompt: z.string().max(200_000),
  tools: z.array(OpenAiToolSchema).max(200),
  task: z.object({ id: z.string(), type: z.string() }).optional(),
});
export type ToolSessionStart = z.infer<typeof ToolSessionStartSchema>;

/** unit → bench: ready for the first user turn. */
export const ToolSessionReadySchema = z.object({ sessionId: SessionId });

/** bench → unit: what the (simulated) user says. */
export const ToolUserTurnSchema = z.object({ sessionId: SessionId, turn: z.number().int().min(0), text: z.string().max(20_000) });
export type ToolUserTurn = z.infer<typeof ToolUserTurnSchema>;

/** unit → bench: one agent message with its tool calls (run in order, each a separate action). */
export const ToolCallMessageSchema = z.object({
  sessionId: SessionId,
  turn: z.number().int().min(0),
  step: z.number().int().min(0),
  calls: z
    .array(
      z.object({
        callId: z.string().min(1).max(200),
        name: z.string().min(1).max(200),
        /** a JSON object; a string is read as JSON text (a malformed one is recorded, not fatal) */
        arguments: z.unknown(),
      }),
    )
    .min(1)
    .max(32),
});
export type ToolCallMessage = z.infer<typeof ToolCallMessageSchema>;

/** bench → unit: the results of one tool_call message, in call order. */
export const ToolResultMessageSchema = z.object({
  sessionId: SessionId,
  turn: z.number().int().min(0),
  step: z.number().int().min(0),
  results: z.array(
    z.object({
      callId: z.string(),
      name: z.string(),
      /** the tool's JSON output text: {"status":"SUCCESS","result":…} / {"status":"FAILURE","error":…} / "Error: …" */
      output: z.string(),
      status: z.enum(['success', 'rejected', 'invalid', 'unknown_tool', 'malformed']),
    }),
  ),
});
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;

/** unit → bench: the assistant's text to the user; ends the unit's turn. */
export const ToolAssistantTextSchema = z.object({ sessionId: SessionId, turn: z.number().int().min(0), text: z.string().max(20_000) });
export type ToolAssistantText = z.infer<typeof ToolAssistantTextSchema>;

/** bench → unit: the episode is over (user stop, terminate tool, message limit, error). */
export const ToolSessionEndSchema = z.object({ sessionId: SessionId, reason: z.string().max(2000) });
