import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { parseOrThrow } from '../domain/validation.ts';
import { carbenchPath } from './paths.ts';
import { JsonSchemaNodeSchema, OpenAiToolSchema, type JsonSchemaNode, type OpenAiTool } from '../protocol/tools.ts';

/** The tool schema is wire format (tool_session_start offers tools): src/protocol/tools.ts holds it. */
export { JsonSchemaNodeSchema, OpenAiToolSchema, type JsonSchemaNode, type OpenAiTool } from '../protocol/tools.ts';

export const ToolDefinitionSchema = z.object({
  name: z.string().min(1),
  order: z.number().int(),
  kind: z.enum(['get', 'set', 'helper']),
  state_changing: z.boolean(),
  state_fields_written: z.array(z.string()),
  requires_confirmation: z.boolean(),
  conditional_confirmation: z.string().nullable(),
  terminates_conversation: z.boolean(),
  related_policy_rules: z.array(z.string()),
  mock_data_used: z.array(z.string()),
  group: z.string(),
  domain: z.string(),
  class_name: z.string().min(1),
  source_path: z.string(),
  openai_schema: OpenAiToolSchema,
  output_schema: JsonSchemaNodeSchema.nullable(),
});
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

let cached: ToolDefinition[] | undefined;

/** The 57 active CAR-bench tools (data/carbench/tools.json), schemas exactly as CAR-bench offers them. */
export function loadToolCatalog(): ToolDefinition[] {
  if (!cached) {
    const path = carbenchPath('tools.json');
    const tools = parseOrThrow(z.array(ToolDefinitionSchema), JSON.parse(readFileSync(path, 'utf8')), path);
    for (const tool of tools) {
      if (tool.openai_schema.function.name !== tool.name) throw new Error(`${path}: tool ${tool.name}: openai_schema.function.name is ${tool.openai_schema.function.name}`);
    }
    cached = tools;
  }
  return cached;
}

export function toolByName(name: string): ToolDefinition | undefined {
  return loadToolCatalog().find((tool) => tool.name === name);
}

/**
 * How a hallucination task's `removed_part` entries act (scoring.md §1, tool_manipulation.py):
 * `tool` hides the tool, `tool.param[.sub]` deletes a parameter (and its `required` entry), `result.tool.path`
 * overwrites that result field with "unknown".
 */
export interface Removals {
  tools: Set<string>;
  /** tool name → parameter paths (each a list of property names) */
  parameters: Map<string, string[][]>;
  /** tool name → result paths */
  results: Map<string, string[][]>;
}

export function parseRemovedParts(removed: readonly string[] | null | undefined): Removals {
  const out: Removals = { tools: new Set(), parameters: new Map(), results: new Map() };
  const names = new Set(loadToolCatalog().map((t) => t.name));
  for (const entry of removed ?? []) {
    const parts = entry.split('.');
    if (parts[0] === 'result') {
      const [, tool, ...path] = parts;
      if (!tool || !names.has(tool) || !path.length) throw new Error(`removed_part "${entry}": expected result.<known tool>.<field path>`);
      out.results.set(tool, [...(out.results.get(tool) ?? []), path]);
    } else if (parts.length === 1) {
      if (!names.has(entry)) throw new Error(`removed_part "${entry}": unknown tool`);
      out.tools.add(entry);
    } else {
      const [tool, ...path] = parts;
      if (!names.has(tool)) throw new Error(`removed_part "${entry}": unknown tool ${tool}`);
      out.parameters.set(tool, [...(out.parameters.get(tool) ?? []), path]);
    }
  }
  return out;
}

function deleteSchemaPath(node: JsonSchemaNode, path: string[]): void {
  const [head, ...rest] = path;
  if (!node.properties || !(head in node.properties)) return;
  const child = node.properties[head];
  if (rest.length) {
    if (typeof child === 'object') deleteSchemaPath(child, rest);
  }
  else {
    delete node.properties[head];
    if (node.required) node.required = node.required.filter((r) => r !== head);
  }
}

/** The tool schemas an agent is offered for a task: all tools minus removed ones, removed parameters deleted. */
export function offeredTools(removals: Removals): OpenAiTool[] {
  return loadToolCatalog()
    .filter((tool) => !removals.tools.has(tool.name))
    .map((tool) => {
      const schema = structuredClone(tool.openai_schema);
      for (const path of removals.parameters.get(tool.name) ?? []) deleteSchemaPath(schema.function.parameters, path);
      return schema;
    });
}

/** Overwrites `path` in a tool result with "unknown", descending into lists (tool_manipulation.py). */
export function maskResultPath(value: unknown, path: string[]): unknown {
  if (Array.isArray(value)) return value.map((item) => maskResultPath(item, path));
  if (!path.length || typeof value !== 'object' || value === null) return value;
  const [head, ...rest] = path;
  const record = value as Record<string, unknown>;
  if (!(head in record)) return value;
  return { ...record, [head]: rest.length ? maskResultPath(record[head], rest) : 'unknown' };
}

/** True when `args` carries a removed parameter path. */
export function usesRemovedParameter(args: unknown, path: string[]): boolean {
  if (!path.length) return true;
  if (typeof args !== 'object' || args === null) return false;
  const [head, ...rest] = path;
  const record = args as Record<string, unknown>;
  return head in record && usesRemovedParameter(record[head], rest);
}
