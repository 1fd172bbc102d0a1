import type { ConnectedHeadUnit } from '../../run/connect.ts';
import { connectConfiguredHeadUnit } from '../../run/headunit.ts';
import type { RigEnvelope } from '../../run/kind.ts';
import { campaignWorldFile } from './world.ts';
import type { UserSimulator } from '../../simulator/types.ts';
import { driverVocabulary } from '../../voice/vocabulary.ts';
import { isModelRef, type LoadedConversations } from './config.ts';
import { recordRunFact, RUN_FACTS, type InvocationFact, type RunFactSink } from '../../run/run-facts.ts';
import { buildTiers, describeTiers, type CampaignTiers } from './tiers.ts';
import { modelHostsOf } from '../../run/model-tiers.ts';
import { VehicleFeed, type ConversationDrive } from './vehicle-feed.ts';
import { CampaignVoice } from './voice.ts';

export interface RigOptions {
  /** overrides of the config's tiers (`icabench run --simulator/--judge`) */
  overrides?: { simulator?: string; judges?: string[] };
  /** tiers already built (tests); default buildTiers(config, overrides) */
  tiers?: CampaignTiers;
  /** an already connected system under test (tests); it stays open when the rig closes. Default: the config's headUnit */
  headUnit?: ConnectedHeadUnit;
  /** a user of its own in place of the config's simulator, the judges kept (a live session: the technician's turns) */
  user?: UserSimulator;
  log?: (line: string) => void;
}

/** What one conversation records when it ends (or is abandoned): the frames of its drive. */
export interface RunRecorder {
  conversationEnded(key: string, drive: ConversationDrive | undefined): void;
}

/**
 * Everything a campaign runs on: the simulator and judge tiers, the head unit (with its voice front
 * end and CAN mapping when the config asks for them), the drive-scenario feed and the bench's voice.
 * `icabench run`, the bench app and any later worker open it with openRig, so a config runs the
 * same wherever it is started.
 */
export interface Rig {
  readonly tiers: CampaignTiers;
  readonly vehicle: VehicleFeed | null;
  readonly headUnit: ConnectedHeadUnit;
  readonly voice: CampaignVoice | null;
  /** what the run envelope records of this rig (src/run/envelope.ts): the config, the tiers, the model hosts, the head unit as connected */
  readonly envelope: RigEnvelope;
  /** Records the drive scenario's feed (`vehicle.feed`) of this invocation and returns the per-conversation recorder of its frames (a fleet worker records into a collector: src/fleet/worker.ts). */
  record(store: RunFactSink, runId: string): RunRecorder;
  /** Closes what the rig opened (a head unit passed in stays open); a second call does nothing. */
  close(): Promise<void>;
}

/**
 * Builds the rig a campaign config describes. Every model it names is checked first (an unavailable
 * one stops here, see buildTiers), then the voice prerequisites, the scenario feed and the head unit
 * come up; on any failure, what was opened is closed again and nothing is recorded.
 */
export async function openRig(campaign: LoadedConversations, options: RigOptions = {}): Promise<Rig> {
  const { config } = campaign;
  const log = options.log ?? (() => undefined);
  const built = options.tiers ?? (await buildTiers(config, options.overrides, log));
  // a user of its own (a live session's technician) keeps the judges and replaces the simulator
  const tiers = options.user ? { ...built, simulator: options.user } : built;
  const hosts = await modelHosts(tiers, config.llm.ollamaHost);
  const spoken = config.voice?.enabled ? config.voice : null;
  CampaignVoice.checkLink(config);
  if (spoken) await CampaignVoice.checkPrerequisites(spoken);
  await CampaignVoice.checkDevices(config);
  const vehicle = config.vehicle ? await VehicleFeed.open(config.vehicle, config.concurrency) : null;
  let headUnit: ConnectedHeadUnit | undefined;
  try {
    headUnit =
      options.headUnit ??
      (await connectConfiguredHeadUnit(config.headUnit, log, {
        vehicleMapping: vehicle?.mapping,
        safety: config.safety,
        world: campaignWorldFile(config) ?? undefined,
        voice: spoken ? { vocabulary: driverVocabulary(campaign.seeds), onError: (error) => log(`voice: the reference head unit could not speak a reply: ${error.message}`) } : undefined,
      }));
    const voice = spoken ? await CampaignVoice.open(spoken, campaign, headUnit, log) : null;
    const connected = headUnit;
    let closing: Promise<void> | null = null;
    return {
      tiers,
      vehicle,
      headUnit: connected,
      voice,
      envelope: { config, modelHosts: hosts, prices: config.llm.prices, tiers: describeTiers(tiers), tracker: tiers.tracker ?? null, headUnit: connected },
      record: (store, runId) => startRecording(store, runId, vehicle, connected),
      close: () =>
        (closing ??= (async () => {
          await voice?.close();
          if (!options.headUnit) await connected.close();
          await vehicle?.close();
        })()),
    };
  } catch (error) {
    if (headUnit && !options.headUnit) await headUnit.close();
    await vehicle?.close();
    throw error;
  }
}

function startRecording(store: RunFactSink, runId: string, vehicle: VehicleFeed | null, headUnit: ConnectedHeadUnit): RunRecorder {
  if (vehicle) recordRunFact(store, runId, RUN_FACTS.vehicleFeed, vehicle.describe());
  if (vehicle?.observation) recordRunFact(store, runId, RUN_FACTS.vehicleObserve, vehicle.observation.describe());
  const rejected = () => {
    const counts = headUnit.reference?.vehicleCounts();
    return counts ? counts.unknownId + counts.lengthMismatch + counts.valuesRejected : null;
  };
  let rejectedBefore = rejected();
  return {
    conversationEnded(key, drive) {
      if (!drive) return;
      const now = rejected();
      recordRunFact(store, runId, RUN_FACTS.vehicleFrames, { conversation: key, framesSent: drive.framesSent(), framesRejected: now === null || rejectedBefore === null ? null : now - rejectedBefore });
      rejectedBefore = now;
    },
  };
}

/** Where the model tiers' calls go (the `modelHosts` of `run.invocation`). */
async function modelHosts(tiers: CampaignTiers, ollamaHost: string | undefined): Promise<InvocationFact['modelHosts']> {
  return modelHostsOf([tiers.simulator.describe, ...tiers.judges.map((j) => j.ref)].filter(isModelRef), ollamaHost);
}

