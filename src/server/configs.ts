import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LineCounter, parseDocument, isNode } from 'yaml';
import type { z } from 'zod';
import { checkStructure, MAX_MESSAGE_DEPTH } from '../protocol/structure.ts';
import { ApiError, type FieldError } from './http-util.ts';
import { isTechniqueRef, parseJudgeRef } from '../llm/modelRef.ts';

/** The model references behind a simulator or judge reference; a technique reference that does not parse stays as it is, so the rig status reports it invalid. */
function servedBy(ref: string): string[] {
  if (!isTechniqueRef(ref)) return [ref];
  try {
    return parseJudgeRef(ref).models;
  } catch {
    return [ref];
  }
}

/** A config is a page of YAML: no campaign needs more nesting or more entries than this. */
const CONFIG_STRUCTURE = { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 100_000, maxStringChars: 200_000 };

/** A field error with the line it sits on in the YAML text, so the editor can mark it. */
export interface ConfigFieldError extends FieldError {
  line: number | null;
}

export interface ConfigCheck {
  valid: boolean;
  errors: ConfigFieldError[];
  /** the validated config when valid */
  config: unknown;
}

export interface ConfigListing {
  name: string;
  valid: boolean;
  errors: ConfigFieldError[];
}

const CONFIG_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}\.ya?ml$/;

/**
 * The campaign configs in bench-configs/, checked with the campaign's own schema so the UI shows
 * exactly the errors `icabench run` would give, each next to its field.
 */
export class ConfigCatalog {
  constructor(
    private readonly dir: string,
    private readonly schema: z.ZodType,
  ) {}

  async list(): Promise<ConfigListing[]> {
    let names: string[];
    try {
      names = (await readdir(this.dir)).filter((n) => CONFIG_NAME.test(n)).sort();
    } catch {
      return [];
    }
    return Promise.all(
      names.map(async (name) => {
        const check = this.check(await readFile(join(this.dir, name), 'utf8'));
        return { name, valid: check.valid, errors: check.errors };
      }),
    );
  }

  /** Model references (simulator, judges) the valid configs name, for the rig status. */
  async modelRefs(): Promise<string[]> {
    const refs = new Set<string>();
    for (const listing of await this.list()) {
      if (!listing.valid) continue;
      const config = (await this.read(listing.name)).config as { simulator?: string; judges?: string[] };
      for (const ref of [config.simulator, ...(config.judges ?? [])]) {
        // a technique judge (sc-5:ollama:…) is served by the models it names
        if (ref && ref !== 'template' && ref !== 'oracle') for (const model of servedBy(ref)) refs.add(model);
      }
    }
    return [...refs];
  }

  async read(name: string): Promise<{ name: string; text: string } & ConfigCheck> {
    if (!CONFIG_NAME.test(name)) throw new ApiError(400, 'invalid_config_name', `config name "${name}" must be a file name ending in .yaml or .yml`);
    let text: string;
    try {
      text = await readFile(join(this.dir, name), 'utf8');
    } catch {
      throw new ApiError(404, 'config_not_found', `no config named "${name}" in ${this.dir}`);
    }
    return { name, text, ...this.check(text) };
  }

  /** Parses YAML text and validates it; every problem names the field and its line. Hostile YAML (alias bombs, deep nesting) is just invalid. */
  check(text: string): ConfigCheck {
    const lineCounter = new LineCounter();
    const invalid = (message: string, line: number | null = null): ConfigCheck => ({ valid: false, config: null, errors: [{ path: '(yaml)', message, line }] });
    let doc: ReturnType<typeof parseDocument>;
    let value: unknown;
    try {
      doc = parseDocument(text, { lineCounter, prettyErrors: false });
      if (doc.errors.length > 0) {
        return {
          valid: false,
          config: null,
          errors: doc.errors.map((e) => ({ path: '(yaml)', message: e.message.split('\n')[0], line: e.linePos?.[0].line ?? null })),
        };
      }
      // the yaml library refuses aliases that expand beyond its limit (a "billion laughs" document) with a ReferenceError
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (error) {
      return invalid(`the YAML cannot be read: ${(error as Error).message}`);
    }
    const violation = checkStructure(value, CONFIG_STRUCTURE);
    if (violation) return invalid(`the YAML is ${violation.message}`);
    return this.validate(value, doc, lineCounter);
  }

  /** Validates an already parsed config (e.g. the one a run stored), without line numbers. */
  checkValue(value: unknown): ConfigCheck {
    return this.validate(value, null, null);
  }

  private validate(value: unknown, doc: ReturnType<typeof parseDocument> | null, lineCounter: LineCounter | null): ConfigCheck {
    const result = this.schema.safeParse(value);
    if (result.success) return { valid: true, errors: [], config: result.data };
    return {
      valid: false,
      config: null,
      errors: result.error.issues.map((issue) => {
        const path = issue.path.map(String);
        return { path: path.length ? path.join('.') : '(root)', message: issue.message, line: doc && lineCounter ? lineOf(doc, lineCounter, path) : null };
      }),
    };
  }
}

/** The line of the deepest node that exists along `path` (a missing field points at its parent). */
function lineOf(doc: ReturnType<typeof parseDocument>, lineCounter: LineCounter, path: string[]): number | null {
  for (let depth = path.length; depth >= 0; depth--) {
    const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth).map((p) => (/^\d+$/.test(p) ? Number(p) : p)), true);
    if (isNode(node) && node.range) return lineCounter.linePos(node.range[0]).line;
  }
  return null;
}
