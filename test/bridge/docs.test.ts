import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AssistantReplySchema, BridgeErrorSchema, HelloAckSchema, HelloSchema, SessionStartSchema, UserTurnSchema } from '../../src/protocol/bridge.ts';
import { BRIDGE_FACTS } from '../../src/bridge/facts.ts';

describe('docs/bridge-protocol.md', () => {
  it('has JSON examples that the schemas accept, in the documented order', () => {
    const doc = readFileSync(new URL('../../docs/bridge-protocol.md', import.meta.url), 'utf8');
    const examples = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1].replace('"token": "…"', '"token": "t"')));
    const schemas = [HelloSchema, HelloAckSchema, SessionStartSchema, UserTurnSchema, AssistantReplySchema];
    expect(examples).toHaveLength(schemas.length);
    schemas.forEach((schema, i) => expect(schema.safeParse(examples[i]).error).toBeUndefined());
  });

  it('documents every bridge_error code and every run fact the bridge records', () => {
    const doc = readFileSync(new URL('../../docs/bridge-protocol.md', import.meta.url), 'utf8');
    for (const code of BridgeErrorSchema.shape.code.options) expect(doc, code).toContain(`| \`${code}\` |`);
    for (const kind of Object.values(BRIDGE_FACTS)) expect(doc, kind).toContain(`\`${kind}\``);
  });
});
