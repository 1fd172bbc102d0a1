import { dirname, join, resolve } from 'node:path';
import { withAbsolutePaths } from '../run/path-fields.ts';
import type { AnyCampaignKind } from '../kinds/registry.ts';
import { conversationsPathFields } from '../kinds/dialogue/config.ts';
import type { LiveSessionConfig } from '../kinds/live/config.ts';
import type { KindConfig, PathField } from '../run/kind.ts';
import { disallowedPaths, type AppPathRoots } from './config-paths.ts';
import { ApiError, type FieldError } from './http-util.ts';

/**
 * The bench app's one path policy (docs/configuration.md, "Allowed folders"): whatever names a file in a request
 * (a campaign's config, a resumed run's stored config, a live session's config) may only read under the
 * workspace, bench-configs/, data/, hardware/ and models/, and only write under the workspace; a serial device
 * must look like one. Every entry point refuses the same way: 400 `path_not_allowed`, each field with its
 * message, before any file is opened. What the app writes itself (pinned suites, conformance reports, edited
 * configs) goes under the workspace by construction. Checked lexically, so the answer is the same whether or
 * not a file exists.
 */
export class PathPolicy {
  readonly roots: AppPathRoots;

  /** `alsoReadable`: folders the app itself keeps files in (the pinned suites') */
  constructor(workspace: string, configsDir: string, alsoReadable: readonly string[] = []) {
    const project = dirname(resolve(configsDir));
    this.roots = {
      configsDir: resolve(configsDir),
      readable: [workspace, configsDir, ...alsoReadable, join(project, 'data'), join(project, 'hardware'), join(project, 'models')],
      writable: [workspace],
    };
  }

  /** The fields of a campaign config that name something outside the allowed folders (the editor shows them at their line). */
  campaignRefusals(kind: AnyCampaignKind, config: KindConfig): FieldError[] {
    return disallowedPaths(kind.pathFields(config), this.roots);
  }

  /** Refuses a campaign config naming a path outside the allowed folders (`where`: the config or run it came from). */
  requireCampaign(kind: AnyCampaignKind, config: KindConfig, where: string): void {
    refuse(this.campaignRefusals(kind, config), where);
  }

  /**
   * A live session's config with its files checked and made absolute against bench-configs/ (as a campaign's
   * are): the session reads exactly what was checked, whatever the app's working folder.
   */
  liveSession(config: LiveSessionConfig, where: string): LiveSessionConfig {
    const fields = conversationsPathFields(config);
    refuse(disallowedPaths(fields, this.roots), where);
    return withAbsolutePaths(config, fields, this.roots.configsDir);
  }
}

function refuse(errors: FieldError[], where: string): void {
  if (errors.length) throw new ApiError(400, 'path_not_allowed', `${where}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}
