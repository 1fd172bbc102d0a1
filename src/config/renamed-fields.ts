import { z } from 'zod';

/**
 * Config fields renamed so every kind says the same name for the same role (docs/configuration.md, "Role names
 * across kinds"). An old name is still read for one release: the schema takes it as the new one, and a file that
 * uses it gets a deprecation message naming the file and the new field, once per process. A file giving both
 * names is a config error (which one would win is not obvious).
 */
export interface RenamedField {
  /** the name configs used before */
  old: string;
  /** the one name for the role */
  now: string;
}

const renamesOf = new WeakMap<z.ZodType, readonly RenamedField[]>();

/** `value` with each old top-level name moved to its new one (both given: left as is, for the schema to refuse). */
export function renameFields(value: unknown, renames: readonly RenamedField[]): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  if (!renames.some(({ old, now }) => old in record && !(now in record))) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(record)) {
    const renamed = renames.find((r) => r.old === key && !(r.now in record));
    out[renamed ? renamed.now : key] = field;
  }
  return out;
}

/**
 * `schema` reading the old names of `renames` as the new ones. Giving both names is an issue at the old one;
 * the loader (loadYamlDocument) prints the deprecation message for a file that uses an old name.
 */
export function acceptingRenamedFields<S extends z.ZodType>(schema: S, renames: readonly RenamedField[]) {
  const accepting = z.preprocess((value, ctx) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const { old, now } of renames) {
        if (old in value && now in value) ctx.addIssue({ code: 'custom', path: [old], message: `"${old}" is the old name of "${now}"; give only "${now}"` });
      }
    }
    return renameFields(value, renames);
  }, schema);
  renamesOf.set(accepting, renames);
  return accepting;
}

/** The renamed fields a schema accepts under their old names (none for most schemas). */
export function renamedFieldsOf(schema: z.ZodType): readonly RenamedField[] {
  return renamesOf.get(schema) ?? [];
}

/** A stored config (a run started before a rename) in today's names, so `--resume` compares like with like. */
export function withCurrentNames(schema: z.ZodType, stored: unknown): unknown {
  const renames = renamedFieldsOf(schema);
  return renames.length ? renameFields(stored, renames) : stored;
}

const warned = new Set<string>();

/** Prints, once per file and field in this process, that `file` uses an old field name. */
export function warnRenamedFields(file: string, value: unknown, renames: readonly RenamedField[], print: (line: string) => void = (line) => console.error(line)): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  for (const { old, now } of renames) {
    if (!(old in value) || warned.has(`${file}\u0000${old}`)) continue;
    warned.add(`${file}\u0000${old}`);
    print(`${file}: "${old}" is deprecated and will be refused in the next release; rename it "${now}" (docs/configuration.md, "Role names across kinds")`);
  }
}
