import type { z } from 'zod';

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  element?: z.ZodType;
  valueType?: z.ZodType;
  keyType?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  items?: z.ZodType[];
  rest?: z.ZodType | null;
  getter?: () => z.ZodType;
}
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/**
 * Every field of `schema` that takes free text (a z.string, not an enum or literal): dotted paths, `[]` for an
 * array's items, `*` for a record's values. A test classifies each (a file it names, or not a file), so a new
 * text field of a config or a request cannot go unclassified.
 */
export function stringFields(schema: z.ZodType): string[] {
  return [...new Set(walk(schema, '', new Set()))].sort();
}

/** `ancestors`: the schemas above this one (a recursive schema ends there; a schema shared by two fields is walked at each). */
function walk(schema: z.ZodType, path: string, ancestors: ReadonlySet<z.ZodType>): string[] {
  if (ancestors.has(schema)) return [];
  const seen = new Set(ancestors).add(schema);
  const def = defOf(schema);
  const at = (key: string) => (path ? `${path}.${key}` : key);
  switch (def.type) {
    case 'string':
    case 'template_literal':
      return [path || '(root)'];
    case 'object':
      return Object.entries(def.shape ?? {}).flatMap(([key, child]) => walk(child, at(key), seen));
    case 'array':
      return walk(def.element!, `${path}[]`, seen);
    case 'tuple':
      return [...(def.items ?? []), ...(def.rest ? [def.rest] : [])].flatMap((item) => walk(item, `${path}[]`, seen));
    case 'record':
      return walk(def.valueType!, at('*'), seen);
    case 'union':
      return (def.options ?? []).flatMap((option) => walk(option, path, seen));
    case 'intersection':
      return [...walk(def.left!, path, seen), ...walk(def.right!, path, seen)];
    case 'pipe':
      return [...walk(def.in!, path, seen), ...(defOf(def.out!).type === 'transform' ? [] : walk(def.out!, path, seen))];
    case 'lazy':
      return walk(def.getter!(), path, seen);
    default:
      return def.innerType ? walk(def.innerType, path, seen) : [];
  }
}
