/**
 * How the fake model writes an answer (issue #37): as a grammar-constrained model does (llama.cpp turns a request's
 * JSON schema into a grammar, Ollama's `format` and vLLM's guided decoding likewise), it fills in the schema the request
 * carries. What it means is fixed per bench step (a `meaning`: values by field name, in every vocabulary the bench's
 * prompt versions use); how much it writes follows the schema:
 * - an object: its properties in the schema's order; a required one always, an optional one only when the meaning
 *   has something non-empty for it (a model leaves out what the grammar lets it leave out and it has nothing for);
 * - a string: the meaning's text, cut at maxLength (the grammar ends it there); a required one it has no text for: "-";
 * - an array: the meaning's items, at most maxItems; anyOf: the first branch the meaning fits.
 * So a schema that asks for less (fewer fields, no free text where nothing failed, bounded text) costs fewer
 * completion tokens, and the same meaning under the earlier schemas costs what it did. Answers are compact JSON.
 */

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  maxItems?: number;
  minimum?: number;
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
};

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Has something to say: not absent, null, empty text, an empty list or object, or false. */
function nonEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

function typesOf(schema: JsonSchema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** Whether a value could be written as this schema (branch choice): its kind, and its constants and enums. */
function fits(schema: JsonSchema, value: unknown, root: JsonSchema): boolean {
  const s = resolve(schema, root);
  if ('const' in s) return s.const === value;
  if (s.enum) return s.enum.includes(value);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return branches.some((b) => fits(b, value, root));
  const types = typesOf(s);
  if (value === null) return types.includes('null');
  if (types.length === 0) return true;
  if (Array.isArray(value)) return types.includes('array');
  if (isObject(value)) return types.includes('object') && Object.entries(s.properties ?? {}).every(([key, property]) => !(key in value) || value[key] === undefined || fits(property, value[key], root));
  if (typeof value === 'number') return types.includes('number') || types.includes('integer');
  return types.includes(typeof value);
}

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace(/^#\/\$defs\//, '');
  const found = root.$defs?.[name];
  if (!found) throw new Error(`schemaAnswer: unresolved $ref ${schema.$ref}`);
  return found;
}

function writeObject(s: JsonSchema, meaning: unknown, root: JsonSchema): Record<string, unknown> {
  const given = isObject(meaning) ? meaning : {};
  const required = new Set(s.required ?? []);
  const out: Record<string, unknown> = {};
  for (const [key, property] of Object.entries(s.properties ?? {})) {
    if (required.has(key) || nonEmpty(given[key])) out[key] = write(property, given[key], root);
  }
  // a record (z.record): the meaning's own keys
  if (isObject(s.additionalProperties) && !s.properties) for (const [key, value] of Object.entries(given)) out[key] = write(s.additionalProperties, value, root);
  return out;
}

/** The value a grammar-constrained model writes for `schema` when it means `meaning`. */
export function write(schema: JsonSchema, meaning: unknown, root: JsonSchema = schema): unknown {
  const s = resolve(schema, root);
  if ('const' in s) return s.const;
  if (s.enum) return s.enum.includes(meaning) ? meaning : s.enum[0];
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return write(branches.find((b) => fits(b, meaning, root)) ?? branches[0], meaning, root);
  const types = typesOf(s);
  if (meaning === null && types.includes('null')) return null;
  const type = types.find((t) => t !== 'null') ?? (isObject(meaning) ? 'object' : typeof meaning);
  switch (type) {
    case 'object':
      return writeObject(s, meaning, root);
    case 'array': {
      const items = (Array.isArray(meaning) ? meaning : []).slice(0, s.maxItems ?? Infinity);
      return items.map((item) => write(s.items ?? {}, item, root));
    }
    case 'string': {
      const text = typeof meaning === 'string' ? meaning : '-';
      return s.maxLength !== undefined ? text.slice(0, s.maxLength) : text;
    }
    case 'number':
    case 'integer':
      return typeof meaning === 'number' ? meaning : (s.minimum ?? 0);
    case 'boolean':
      return meaning === true;
    default:
      return meaning ?? null;
  }
}

/** The JSON schema a chat request asks the model to follow: OpenAI response_format or a forced tool, Ollama `format`. */
export function requestedSchema(body: any): JsonSchema | undefined {
  const schema = body?.response_format?.json_schema?.schema ?? body?.tools?.[0]?.function?.parameters ?? body?.format;
  return isObject(schema) ? (schema as JsonSchema) : undefined;
}
