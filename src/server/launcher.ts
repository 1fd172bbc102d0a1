import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { loadCampaignConfig, type CampaignConfig, type LoadedCampaign } from '../campaign/config.ts';
import { runCampaign } from '../campaign/runner.ts';
import { buildTiers } from '../campaign/tiers.ts';
import { connectConfiguredHeadUnit, type ConnectedHeadUnit } from '../headunit/connect.ts';
import type { ResultStore } from '../store/store.ts';
import type { CampaignLauncher } from './campaign-control.ts';
import type { ConnectedUnit } from './rig-status.ts';
import { absoluteConfigPaths } from './config-paths.ts';

/** Where the app keeps the configs it started from edited text (under the workspace). */
export const EDITED_CONFIGS_DIR = 'edited-configs';

/**
 * The real campaign runner behind the bench server. It connects the head unit itself (rather
 * than leaving it to runCampaign) so the rig status can show the unit while a campaign runs.
 */
export class RunnerLauncher {
  private headUnit: ConnectedHeadUnit | null = null;

  constructor(private readonly store: ResultStore) {}

  readonly launch: CampaignLauncher = async ({ campaign, resumeRunId, signal, onEvent }) => {
    const tiers = await buildTiers(campaign.config);
    const headUnit = await connectConfiguredHeadUnit(campaign.config.headUnit, undefined, { safety: campaign.config.safety });
    this.headUnit = headUnit;
    try {
      const result = await runCampaign(campaign, { store: this.store, tiers, resumeRunId, signal, onEvent, headUnit });
      return { runId: result.runId, status: result.status };
    } finally {
      this.headUnit = null;
      await headUnit.close();
    }
  };

  connectedUnits = (): ConnectedUnit[] => this.headUnit?.bridge?.connectedUnits() ?? [];
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
