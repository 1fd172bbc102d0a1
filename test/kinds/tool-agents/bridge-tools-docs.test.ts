import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ToolAssistantTextSchema, ToolCallMessageSchema, ToolResultMessageSchema, ToolSessionStartSchema, ToolUserTurnSchema, TOOL_EVENTS } from '../../../src/protocol/tools.ts';

describe('docs/bridge-protocol.md, tool extension', () => {
  const doc = readFileSync(new URL('../../../docs/bridge-protocol.md', import.meta.url), 'utf8');
  it('has one example per message that its schema accepts', () => {
    const examples = [...doc.matchAll(/```json icabench-tools\/1 (\w+)\n([\s\S]*?)```/g)].map((m) => ({ event: m[1], body: JSON.parse(m[2]) }));
    const schemas = { tool_session_start: ToolSessionStartSchema, tool_user_turn: ToolUserTurnSchema, tool_call: ToolCallMessageSchema, tool_result: ToolResultMessageSchema, tool_assistant_text: ToolAssistantTextSchema };
    expect(examples.map((e) => e.event)).toEqual(Object.keys(schemas));
    for (const e of examples) expect(schemas[e.event as keyof typeof schemas].safeParse(e.body).error, e.event).toBeUndefined();
  });
  it('lists every event', () => {
    for (const event of Object.values(TOOL_EVENTS)) expect(doc).toContain(`| \`${event}\` |`);
  });
});
