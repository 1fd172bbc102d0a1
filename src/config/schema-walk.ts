import type { z } from 'zod';

/**
 * Walks zod schemas the way a config file is laid out, so a loader can say which keys are allowed at a
 * place in the file (for "did you mean …?") and a test can check that every object of a config schema
 * is strict. Only the schema kinds config schemas use are followed; anything else is a leaf.
 */

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  discriminator?: string;
  element?: z.ZodType;
  valueType?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  items?: z.ZodType[];
  getter?: () => z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/** The schema under optional/default/pipe/lazy wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let i = 0; i < 100; i++) {
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) current = def.innerType;
    else if (def.type === 'pipe' && def.in) current = defOf(def.in).type === 'transform' && def.out ? def.out : def.in;
    else if (def.type === 'lazy' && def.getter) current = def.getter();
    else return current;
  }
  return current;
}

/** The object schemas `value` may be validated against at this point (several for a union). */
function objectCandidates(schema: z.ZodType, value: unknown): Array<Record<string, z.ZodType>> {
  const inner = unwrap(schema);
  const def = defOf(inner);
  if (def.type === 'object' && def.shape) return [def.shape];
  if (def.type === 'intersection' && def.left && def.right) return [...objectCandidates(def.left, value), ...objectCandidates(def.right, value)];
  if (def.type === 'union' && def.options) {
    const all = def.options.flatMap((option) => objectCandidates(option, value));
    if (def.discriminator && value && typeof value === 'object') {
      const tag = (value as Record<string, unknown>)[def.discriminator];
      const chosen = all.filter((shape) => shape[def.discriminator!]?.safeParse(tag).success);
      if (chosen.length) return chosen;
    }
    return all;
  }
  return [];
}

/** The schema of the child `key` of a value validated by `schema` (undefined when the schema has no such child). */
function childSchema(schema: z.ZodType, value: unknown, key: PropertyKey): z.ZodType | undefined {
  const inner = unwrap(schema);
  const def = defOf(inner);
  if (def.type === 'array' && def.element) return def.element;
  if (def.type === 'tuple' && def.items) return def.items[Number(key)];
  if (def.type === 'record' && def.valueType) return def.valueType;
  if (def.type === 'union' && def.options && !def.discriminator) {
    // a plain union ("all" or a list, a number or a range): the first option that has the child
    for (const option of def.options) {
      const child = childSchema(option, value, key);
      if (child) return child;
    }
    return undefined;
  }
  for (const shape of objectCandidates(inner, value)) if (shape[key as string]) return shape[key as string];
  return undefined;
}

/** The keys an object at `path` of a value validated by `schema` may have; empty when unknown. */
export function allowedKeysAt(schema: z.ZodType, root: unknown, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = schema;
  let value: unknown = root;
  for (const key of path) {
    if (!current) return [];
    current = childSchema(current, value, key);
    value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  }
  if (!current) return [];
  return [...new Set(objectCandidates(current, value).flatMap((shape) => Object.keys(shape)))];
}

/** Field paths of every object schema reachable from `schema` that lets unknown keys through (not strict). */
export function nonStrictObjects(schema: z.ZodType, path = '(root)', seen = new Set<z.ZodType>()): string[] {
  const inner = unwrap(schema);
  if (seen.has(inner)) return [];
  seen.add(inner);
  const def = defOf(inner);
  const found: string[] = [];
  if (def.type === 'object' && def.shape) {
    if (!def.catchall || defOf(def.catchall).type !== 'never') found.push(path);
    for (const [key, child] of Object.entries(def.shape)) found.push(...nonStrictObjects(child, `${path}.${key}`, seen));
  } else if (def.type === 'union' && def.options) {
    def.options.forEach((option, i) => found.push(...nonStrictObjects(option, `${path}|${i}`, seen)));
  } else if (def.type === 'intersection' && def.left && def.right) {
    found.push(...nonStrictObjects(def.left, path, seen), ...nonStrictObjects(def.right, path, seen));
  } else if (def.type === 'array' && def.element) {
    found.push(...nonStrictObjects(def.element, `${path}[]`, seen));
  } else if (def.type === 'tuple' && def.items) {
    def.items.forEach((item, i) => found.push(...nonStrictObjects(item, `${path}[${i}]`, seen)));
  } else if (def.type === 'record' && def.valueType) {
    found.push(...nonStrictObjects(def.valueType, `${path}.*`, seen));
  }
  return found;
}
