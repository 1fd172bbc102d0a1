import type { ConversationSpec } from '../../domain/conversation.ts';
import { formatMinutes, minutesOfDay } from '../../domain/context.ts';
import { createRng, hashSeed } from '../../domain/rng.ts';
import { DISTRICTS } from '../../world/world.ts';
import { CLEAN_LEVEL, snrLevels } from '../../voice/acoustics.ts';
import type { LoadedCampaign } from './config.ts';

/**
 * Representative sampling: conversations cycle through the seed pool in a shuffled order (the
 * campaign's `seeds`, already shuffled by the sampling seed when the pool was read, see
 * seed-pool.ts), so every seed (and so every task combination) is used equally often; personas and turn budgets
 * rotate independently. Seeds, contexts and RNG seeds depend only on the sampling seed and the
 * conversation index, so a guided and a baseline run with the same seed use the same seeds.
 * Planned count: conversations × repeats × SNR levels (voice campaigns with a sweep). A vehicle campaign
 * with a `startS` range draws each conversation's start in the drive scenario the same way.
 */

export function planConversations(campaign: LoadedCampaign): ConversationSpec[] {
  const { config, seeds } = campaign;
  const from = minutesOfDay(config.timeWindow.from);
  const to = minutesOfDay(config.timeWindow.to);
  const specs: ConversationSpec[] = [];
  // an SNR sweep runs each sampled conversation once per level: the same seed, context and RNG, so levels are paired
  const voice = config.voice?.enabled ? config.voice : null;
  const levels = voice ? snrLevels(voice.acoustics) : [null];
  for (let i = 0; i < config.conversations; i++) {
    const seed = seeds[i % seeds.length];
    const local = createRng(hashSeed(config.seed, i));
    const city = seed.city ?? (local.chance(0.5) ? 'Munich' : 'Berlin');
    const district = local.pick(DISTRICTS.filter((d) => d.city === city));
    const time = formatMinutes(from + Math.floor(local.next() * ((to - from) / 5 + 1)) * 5);
    const persona = config.mode === 'baseline' ? 'neutral' : config.personas[i % config.personas.length];
    const maxTurns = config.maxTurns[Math.floor(i / config.personas.length) % config.maxTurns.length];
    // repeats and SNR levels of a conversation share its context
    const context = { location: { city, district: district.name, position: district.center }, date: local.pick(config.dates), time };
    // drawn after the context, so configs without a start range keep their plans
    const startRange = typeof config.vehicle?.startS === 'object' ? config.vehicle.startS : null;
    const vehicleStartS = startRange ? Math.min(startRange.to, startRange.from + Math.floor(local.next() * (startRange.to - startRange.from + 1))) : undefined;
    for (let repeat = 0; repeat < config.repeats; repeat++) {
      for (const snrDb of levels) {
        specs.push({
          key: `c${String(i).padStart(5, '0')}-${seed.id}-r${repeat}${levels.length > 1 ? `-${snrDb === null ? CLEAN_LEVEL : `snr${snrDb}`}` : ''}`,
          seed,
          persona,
          mode: config.mode,
          strategies: config.mode === 'guided' ? campaign.strategies : [],
          maxTurns,
          context,
          repeat,
          rngSeed: hashSeed(config.seed, i, repeat, 'conversation'),
          ...(voice ? { snrDb } : {}),
          ...(vehicleStartS !== undefined ? { vehicleStartS } : {}),
        });
      }
    }
  }
  return specs;
}
