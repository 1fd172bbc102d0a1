/**
 * The driver utterances of the quickstart campaign (bench-configs/quickstart.yaml): its first `count`
 * conversations run as text against the campaign's reference head unit (in process, faults on) with the
 * template simulator.
 * Used by the voice benchmark and the voice acceptance test to measure recognition on what the
 * campaign really says.
 */
import { loadCampaignConfig } from '../src/kinds/dialogue/config.ts';
import { runConversation } from '../src/kinds/dialogue/conversation.ts';
import { planConversations } from '../src/kinds/dialogue/sampling.ts';
import type { SeedPhrase } from '../src/domain/conversation.ts';
import type { Persona } from '../src/domain/taxonomy.ts';
import { InProcessHeadUnit } from '../src/headunit/in-process.ts';
import { ReferenceHeadUnit } from '../src/headunit/reference/reference-headunit.ts';
import { TemplateSimulator } from '../src/simulator/template.ts';

export const QUICKSTART_CONFIG = new URL('../bench-configs/quickstart.yaml', import.meta.url).pathname;

export async function quickstartCampaignUtterances(count: number): Promise<{ seeds: SeedPhrase[]; utterances: Array<{ text: string; persona: Persona }> }> {
  const campaign = loadCampaignConfig(QUICKSTART_CONFIG);
  const headUnit = campaign.config.headUnit;
  if (headUnit.type !== 'reference') throw new Error(`${QUICKSTART_CONFIG}: expected the reference head unit`);
  // the campaign's own unit, faults included: its replies steer what the simulator says next
  const unit = new InProcessHeadUnit(new ReferenceHeadUnit({ worldSeed: headUnit.worldSeed, faults: headUnit.faults }));
  const utterances: Array<{ text: string; persona: Persona }> = [];
  for (const spec of planConversations(campaign).slice(0, count)) {
    const result = await runConversation({ spec, openSession: (context) => unit.openSession(spec.key, context), simulator: new TemplateSimulator(), judges: [] });
    for (const turn of result.turns) utterances.push({ text: turn.utterance.text, persona: spec.persona });
  }
  return { seeds: campaign.seeds, utterances };
}
