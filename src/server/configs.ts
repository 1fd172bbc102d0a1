import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { z } from 'zod';
import { ConfigError, lineOfPath, parseYamlSource, validateYaml, type ConfigProblem, type YamlSource } from '../config/yaml.ts';
import { FILE_LIMITS, formatBytes, limitBytes, readBoundedText } from '../domain/input-files.ts';
import { ApiError, type FieldError } from './http-util.ts';
import { isTechniqueRef, parseJudgeRef } from '../llm/modelRef.ts';
import { campaignKindOfValue } from '../kinds/registry.ts';

/** The model references behind a simulator or judge reference; a technique reference that does not parse stays as it is, so the rig status reports it invalid. */
function servedBy(ref: string): string[] {
  if (!isTechniqueRef(ref)) return [ref];
  try {
    return parseJudgeRef(ref).models;
  } catch {
    return [ref];
  }
}

/** A field error with the line it sits on in the YAML text, so the editor can mark it. */
export interface ConfigFieldError extends FieldError {
  line: number | null;
}

export interface ConfigCheck {
  valid: boolean;
  errors: ConfigFieldError[];
  /** the validated config when valid */
  config: unknown;
  /** the campaign kind the text declares (dialogue without `kind`); null when it cannot be read or names no known kind */
  kind: string | null;
}

export interface ConfigListing {
  name: string;
  /** the campaign kind the config declares (dialogue when it has no `kind`); null when its YAML cannot be read or the kind is unknown */
  kind: string | null;
  valid: boolean;
  errors: ConfigFieldError[];
}

const CONFIG_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.ya?ml$/;

/** What the app refuses in a config its schema accepts (e.g. a path outside the allowed folders), each at its field. */
export type AppPolicy = (kind: string, config: unknown) => Promise<FieldError[]>;

/**
 * The campaign configs in bench-configs/, checked with the campaign's own schema so the UI shows
 * exactly the errors `icabench run` would give, each next to its field, and what the app itself refuses
 * (`policy`): a config listed valid is one Start runs, so no Start button is enabled only to refuse.
 */
export class ConfigCatalog {
  constructor(
    private readonly dir: string,
    /** one schema, or the schema for a parsed value (a campaign config's kind picks its schema: src/kinds/registry.ts) */
    private readonly schema: z.ZodType | ((value: unknown) => z.ZodType),
    private readonly policy: AppPolicy = () => Promise.resolve([]),
  ) {}

  private schemaFor(value: unknown): z.ZodType {
    return typeof this.schema === 'function' ? this.schema(value) : this.schema;
  }

  async list(): Promise<ConfigListing[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => CONFIG_NAME.test(n)).sort();
    } catch {
      return [];
    }
    return Promise.all(
      names.map(async (name) => {
        const { valid, errors, kind } = await this.read(name);
        return { name, kind, valid, errors };
      }),
    );
  }

  /** Model references the valid configs name in every role (each kind says which: src/run/kind.ts), for the rig status and `icabench doctor`. */
  async modelRefs(refsOf: (config: unknown) => Promise<string[]>): Promise<string[]> {
    const refs = new Set<string>();
    for (const listing of await this.list()) {
      // a config the schema accepts names its models even when the app would refuse to start it (its config is kept then)
      const { config } = await this.read(listing.name);
      if (config === null) continue;
      // a technique judge (sc-5:ollama:…) is served by the models it names
      for (const ref of await refsOf(config)) for (const model of servedBy(ref)) refs.add(model);
    }
    return [...refs];
  }

  async read(name: string): Promise<{ name: string; text: string } & ConfigCheck> {
    if (!CONFIG_NAME.test(name)) throw new ApiError(400, 'invalid_config_name', `config name "${name}" must be a file name ending in .yaml or .yml`);
    const path = join(this.dir, name);
    if (!existsSync(path)) throw new ApiError(404, 'config_not_found', `no config named "${name}" in ${this.dir}`);
    let text: string;
    try {
      text = readBoundedText(path, 'campaign config', FILE_LIMITS.config);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      return { name, text: '', valid: false, config: null, kind: null, errors: [{ path: '(yaml)', message: error.message, line: null }] };
    }
    return { name, text, ...(await this.checkForApp(text)) };
  }

  /** Parses YAML text and validates it with the project's YAML loader; every problem names the field and its line. Hostile YAML (alias bombs, deep nesting, over 1 MiB) is just invalid. */
  check(text: string): ConfigCheck {
    return this.parseAndValidate(text).check;
  }

  /** `check`, then what the app refuses in a valid config (the policy), each on its field's line: what the editor shows. */
  async checkForApp(text: string): Promise<ConfigCheck> {
    const { check, source } = this.parseAndValidate(text);
    if (!check.valid || !source || check.kind === null) return check;
    const refused = await this.policy(check.kind, check.config);
    if (refused.length === 0) return check;
    const line = (path: string) => lineOfPath(source, path.split('.').map((part) => (/^\d+$/.test(part) ? Number(part) : part)));
    return { ...check, valid: false, errors: refused.map((e) => ({ ...e, line: line(e.path) })) };
  }

  private parseAndValidate(text: string): { check: ConfigCheck; source?: YamlSource } {
    const invalid = (errors: readonly ConfigProblem[], kind: string | null = null): ConfigCheck => ({ valid: false, config: null, kind, errors: errors.map((e) => ({ path: e.path, message: e.message, line: e.line })) });
    if (Buffer.byteLength(text) > limitBytes(FILE_LIMITS.config)) return { check: invalid([{ path: '(yaml)', line: null, message: `the config is larger than the limit of ${formatBytes(limitBytes(FILE_LIMITS.config))} (${FILE_LIMITS.config.env} raises it)` }]) };
    let source: YamlSource;
    try {
      source = parseYamlSource(text, 'config');
    } catch (error) {
      if (error instanceof ConfigError) return { check: invalid(error.problems) };
      throw error;
    }
    const kind = campaignKindOfValue(source.value);
    const result = validateYaml(this.schemaFor(source.value), source);
    return { source, check: result.ok ? { valid: true, errors: [], config: result.data, kind } : invalid(result.problems, kind) };
  }

  /** Validates an already parsed config (e.g. the one a run stored), without line numbers. */
  checkValue(value: unknown): ConfigCheck {
    const kind = campaignKindOfValue(value);
    const result = this.schemaFor(value).safeParse(value);
    if (result.success) return { valid: true, errors: [], config: result.data, kind };
    return { valid: false, config: null, kind, errors: result.error.issues.map((issue) => ({ path: issue.path.length ? issue.path.map(String).join('.') : '(root)', message: issue.message, line: null })) };
  }
}
