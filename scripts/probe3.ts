import { runConversation } from '../src/kinds/dialogue/conversation.ts';
import { InProcessHeadUnit } from '../src/headunit/in-process.ts';
import { OracleJudge } from '../src/judge/oracle.ts';
import { TemplateSimulator } from '../src/simulator/template.ts';
import { World } from '../src/world/world.ts';
import { specFor } from '../test/engine/helpers.ts';
import { HeldOutHeadUnit } from '../test/heldout/heldout-headunit.ts';
const world = new World(1);
const unit = new InProcessHeadUnit(new HeldOutHeadUnit());
const mode = (process.argv[2] ?? 'baseline') as 'baseline' | 'guided';
for (const i of [0, 1, 2, 3]) {
  const spec = specFor(i, mode, { maxTurns: 8 });
  const r = await runConversation({ spec, openSession: (ctx) => unit.openSession(`run/${spec.key}`, ctx), simulator: new TemplateSimulator({ world }), judges: [new OracleJudge(undefined, undefined, world)] });
  console.log(`== ${spec.seed.id}`);
  for (const t of r.turns) console.log(`  ${t.utterance.strategy ?? '-'} | ${t.utterance.text} || ${t.reply?.text.slice(0, 70)} || ${t.verdicts.flatMap((v) => v.labels.map((l) => l.label)).join(',')}`);
}
