import { describe, expect, it } from 'vitest';
import { runConversation } from '../../src/kinds/dialogue/conversation.ts';
import type { ConversationResult } from '../../src/domain/conversation.ts';
import type { FailureLabel } from '../../src/domain/taxonomy.ts';
import { InProcessHeadUnit } from '../../src/headunit/in-process.ts';
import { OracleJudge } from '../../src/judge/oracle.ts';
import { TemplateSimulator } from '../../src/simulator/template.ts';
import { World } from '../../src/world/world.ts';
import { specFor } from '../kinds/dialogue/helpers.ts';
import { HeldOutHeadUnit } from './heldout-headunit.ts';

/** Conversations against the held-out unit with the bench knowing its world, as `npm run bench:heldout` runs them. */
async function against(count: number, mode: 'guided' | 'baseline'): Promise<ConversationResult[]> {
  const world = new World(1);
  const unit = new InProcessHeadUnit(new HeldOutHeadUnit());
  const results: ConversationResult[] = [];
  for (let i = 0; i < count; i++) {
    const spec = specFor(i, mode);
    results.push(await runConversation({ spec, openSession: (ctx) => unit.openSession(`run/${spec.key}`, ctx), simulator: new TemplateSimulator({ world }), judges: [new OracleJudge(undefined, undefined, world)] }));
  }
  return results;
}

const evidenceOf = (results: ConversationResult[], label: FailureLabel) => results.flatMap((r) => r.turns.flatMap((t) => t.verdicts.flatMap((v) => v.labels.filter((l) => l.label === label).map((l) => l.evidence))));

describe('the held-out test unit (bench:heldout)', () => {
  it('its own fault types are found and labelled: a climate value off by two, an unrelated answer to a repeated request, a made-up place', async () => {
    const results = await against(36, 'guided');
    expect(evidenceOf(results, 'constraint_missed').some((e) => /^Set (\d+)°C instead of (\d+)°C\.$/.test(e))).toBe(true);
    expect(evidenceOf(results, 'irrelevant_response').some((e) => e.endsWith('the head unit answered with vehicle_info.'))).toBe(true);
    expect(evidenceOf(results, 'constraint_missed').some((e) => e.includes('does not exist in the world: a fabricated result'))).toBe(true);
  });

  it('is a test-only module: nothing under src/ imports it', async () => {
    const { readdirSync, readFileSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const walk = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
    expect(walk('src').filter((file) => readFileSync(file, 'utf8').includes('heldout-headunit'))).toEqual([]);
  });
});
