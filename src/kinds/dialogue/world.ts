import { z } from 'zod';
import { PoiSchema } from '../../protocol/bridge.ts';
import { loadYaml } from '../../config/yaml.ts';
import { World } from '../../world/world.ts';
import type { CampaignConfig } from './config.ts';

/** A world file: the places a head unit knows, in the bridge protocol's place format (docs/architecture.md, "Which world"). */
export const WorldFileSchema = z.strictObject({
  description: z.string().default(''),
  pois: z.array(PoiSchema).min(1).max(100_000),
});

/** The world of the world file a campaign names; null when it names none. */
export function campaignWorldFile(config: Pick<CampaignConfig, 'world'>): World | null {
  if (!config.world) return null;
  return new World(0, loadYaml(WorldFileSchema, config.world, 'world file').pois);
}

/**
 * The head unit's world as far as the bench knows it — the one answer for the simulator, the oracle and the
 * reference unit: the world file the campaign names, else the reference unit's own world, else unknown (null:
 * a unit whose data the bench does not know is judged on its replies' own claims).
 */
export function campaignWorld(config: Pick<CampaignConfig, 'world' | 'headUnit'>): World | null {
  return campaignWorldFile(config) ?? (config.headUnit.type === 'reference' ? new World(config.headUnit.worldSeed) : null);
}
