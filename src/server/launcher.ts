import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadCampaignConfig, type CampaignConfig, type LoadedCampaign } from '../kinds/dialogue/config.ts';
import { openRig, type Rig } from '../run/rig.ts';
import { runCampaign } from '../run/runner.ts';
import { openFleetExecutor } from '../fleet/coordinator.ts';
import type { ResultStore } from '../store/store.ts';
import type { CampaignLauncher } from './campaign-control.ts';
import type { ConnectedUnit } from './rig-status.ts';
import { absoluteConfigPaths } from './config-paths.ts';

/** Where the app keeps the configs it started from edited text (under the workspace). */
export const EDITED_CONFIGS_DIR = 'edited-configs';

/**
 * The real campaign runner behind the bench server: the same rig as `icabench run` (openRig: tiers,
 * head unit with its voice front end and CAN mapping, vehicle feed, voice), opened here rather than
 * inside runCampaign so the rig status can show the unit while a campaign runs. With a fleet
 * (`icabench serve --fleet URL`) the campaign runs on the fleet's workers as `icabench run --fleet` does.
 */
export class RunnerLauncher {
  private rig: Rig | null = null;

  constructor(
    private readonly store: ResultStore,
    private readonly log: (line: string) => void = () => undefined,
    private readonly fleetUrl?: string,
  ) {}

  readonly launch: CampaignLauncher = async ({ campaign, resumeRunId, signal, onEvent }) => {
    if (this.fleetUrl) {
      // the fleet's workers open their rigs; the run closes the executor when it ends
      const executor = await openFleetExecutor(campaign, { redisUrl: this.fleetUrl, log: this.log });
      const result = await runCampaign(campaign, { store: this.store, executor, resumeRunId, signal, onEvent, log: this.log });
      return { runId: result.runId, status: result.status };
    }
    const rig = await openRig(campaign, { log: this.log });
    this.rig = rig;
    try {
      const result = await runCampaign(campaign, { store: this.store, rig, resumeRunId, signal, onEvent, log: this.log });
      return { runId: result.runId, status: result.status };
    } finally {
      this.rig = null;
      await rig.close();
    }
  };

  connectedUnits = (): ConnectedUnit[] => this.rig?.headUnit.bridge?.connectedUnits() ?? [];
}

/**
 * A config the UI edited, or one a run stored, becomes a file again so it loads exactly like
 * `icabench run` loads it. Its paths are made absolute first (the copy lives in the workspace, not
 * beside the original). A copy that does not load is removed again: a failed start leaves nothing.
 */
export function materializeConfig(config: CampaignConfig, configsDir: string, workspace: string, label: string): LoadedCampaign {
  const dir = join(workspace, EDITED_CONFIGS_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${label.replace(/[^A-Za-z0-9._-]/g, '_')}-${Date.now()}.yaml`);
  writeFileSync(path, stringify(absoluteConfigPaths(config, configsDir)));
  try {
    return loadCampaignConfig(path);
  } catch (error) {
    rmSync(path, { force: true });
    throw error;
  }
}

/** Removes the workspace copy materializeConfig wrote for a campaign whose start failed later (e.g. another one is running). */
export function discardMaterialized(campaign: LoadedCampaign, workspace: string): void {
  if (dirname(campaign.path) === resolve(workspace, EDITED_CONFIGS_DIR)) rmSync(campaign.path, { force: true });
}
