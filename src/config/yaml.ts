import { isAlias, isMap, isNode, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from 'yaml';
import type { z } from 'zod';
import { ConfigError, FILE_LIMITS, readBoundedText, type ConfigProblem, type FileLimit } from '../domain/input-files.ts';
import { checkStructure, MAX_MESSAGE_DEPTH } from '../protocol/structure.ts';
import { allowedKeysAt } from './schema-walk.ts';
import { renamedFieldsOf, warnRenamedFields } from './renamed-fields.ts';

/**
 * The one YAML loader of the project: every YAML file icabench reads (campaigns, seed pools, scenarios,
 * mappings, model manifests, judge-bench and manual-QA configs) and every YAML text the bench app
 * checks goes through here (`loadYaml`, `parseYaml`, or `parseYamlSource` + `validateYaml`). It reads at most a size cap, refuses alias bombs and absurd
 * nesting, and reports every problem as `file:line: field: what was expected`, with the line of the
 * offending key, a "did you mean …?" for unknown keys and the mapping a missing field belongs in.
 */

/** Scenario and mapping names without a slash or .yaml are looked up in bench-configs/scenarios and hardware/mappings; anything else is a path. */
export const PATH_LIKE = /[\\/]|\.ya?ml$/i;

/** The config cap by default (a suite the importer writes fits it, so it reads back without raising it). */
export const MAX_CONFIG_BYTES = FILE_LIMITS.config.defaultMiB * 1024 * 1024;
/** At most this many problems are listed; the rest are counted. */
export const MAX_LISTED_ERRORS = 20;
/** Aliases a document may expand (a "billion laughs" document needs millions). */
const MAX_ALIAS_COUNT = 100;
const STRUCTURE = { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 1_000_000, maxStringChars: 1_000_000 };

// every caller of the loader catches this one error class (it lives beside the bounded reader, which throws it too)
export { ConfigError, type ConfigProblem } from '../domain/input-files.ts';

/** The yaml library's message without its excerpt and position (the caller prints file:line:col). */
function yamlMessage(message: string): string {
  return message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
}

/** A parsed YAML text that keeps its positions, so problems can be placed on lines. */
export interface YamlSource {
  file: string;
  doc: Document.Parsed;
  lines: LineCounter;
  /** the plain value (maps as objects) */
  value: unknown;
  /** lines of the file before this text (a part of a file parsed alone, e.g. one seed of a pool) */
  lineOffset: number;
}

/** Parses YAML text into a plain value with positions; syntax errors, alias bombs and absurd nesting are ConfigErrors at file:line:col. */
export function parseYamlSource(text: string, file: string, lineOffset = 0): YamlSource {
  const lines = new LineCounter();
  let doc: Document.Parsed;
  const tooDeep = () => {
    const message = `nested too deeply (limit ${STRUCTURE.maxDepth})`;
    return new ConfigError(`${file}: ${message}`, [{ path: '(yaml)', line: null, message }]);
  };
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: true, uniqueKeys: true });
  } catch (error) {
    // the parser reports what it can as doc.errors; anything it throws (a stack overflow on absurd nesting) is just invalid YAML
    if (error instanceof RangeError) throw tooDeep();
    const message = `invalid YAML: ${(error as Error).message}`;
    throw new ConfigError(`${file}: ${message}`, [{ path: '(yaml)', line: null, message }]);
  }
  if (doc.errors.length > 0) {
    // the parser turns its own stack overflow on absurd nesting into an error entry
    if (doc.errors.some((e) => /Maximum call stack size exceeded/.test(e.message))) throw tooDeep();
    const problems = doc.errors.map((e) => ({ path: '(yaml)', line: e.linePos ? e.linePos[0].line + lineOffset : null, message: `invalid YAML: ${yamlMessage(e.message)}` }));
    const listed = doc.errors.slice(0, MAX_LISTED_ERRORS).map((e) => `${file}:${e.linePos ? `${e.linePos[0].line + lineOffset}:${e.linePos[0].col}` : '?'}: invalid YAML: ${yamlMessage(e.message)}`);
    throw new ConfigError(capped(listed, doc.errors.length), problems);
  }
  let unresolved: ReturnType<typeof unresolvedAlias>;
  try {
    unresolved = unresolvedAlias(doc);
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep();
    throw error;
  }
  if (unresolved) {
    const line = unresolved.node.range ? lines.linePos(unresolved.node.range[0]).line + lineOffset : null;
    // a part of a file parsed alone (one seed of a large pool) cannot see the anchors of the other parts
    const hint = lineOffset > 0 ? '; each seed of a large pool is read on its own, so an alias cannot refer to an anchor in another seed: repeat the value' : '';
    const message = `alias *${unresolved.name} refers to no anchor &${unresolved.name} before it${hint}`;
    throw new ConfigError(`${file}${line ? `:${line}` : ''}: ${message}`, [{ path: '(yaml)', line, message }]);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof RangeError) throw tooDeep();
    // the yaml library refuses aliases that expand beyond maxAliasCount (a "billion laughs" document) with a ReferenceError
    const message = `the YAML cannot be expanded: ${(error as Error).message}`;
    throw new ConfigError(`${file}: ${message}`, [{ path: '(yaml)', line: null, message }]);
  }
  const violation = checkStructure(value, STRUCTURE);
  if (violation) {
    const message = violation.limit === 'maxDepth' ? `nested too deeply (limit ${STRUCTURE.maxDepth})` : `the YAML is ${violation.message}`;
    throw new ConfigError(`${file}: ${message}`, [{ path: '(yaml)', line: null, message }]);
  }
  return { file, doc, lines, value, lineOffset };
}

/** The first alias whose anchor is not set before it (the yaml library says so without a line), in document order. */
function unresolvedAlias(doc: Document.Parsed): { name: string; node: Node } | null {
  const anchors = new Set<string>();
  let found: { name: string; node: Node } | null = null;
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      if (!anchors.has(node.source)) {
        found = { name: node.source, node };
        return visit.BREAK;
      }
    } else if (isNode(node) && node.anchor) anchors.add(node.anchor);
    return undefined;
  });
  return found;
}

/** The node at `path`, or at the deepest part of it that exists (a missing field points at its parent): its key node (in a map) and value node. */
function nodeAt(doc: Document.Parsed, path: readonly PropertyKey[]): { keyNode: Node | null; valueNode: Node | null } {
  let node: Node | null = doc.contents as Node | null;
  let keyNode: Node | null = null;
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(key));
      if (!pair) break;
      keyNode = pair.key as Node;
      node = pair.value as Node | null;
    } else if (isSeq(node)) {
      const item = node.items[Number(key)] as Node | undefined;
      if (item === undefined) break;
      keyNode = null;
      node = item;
    } else break;
  }
  return { keyNode, valueNode: node };
}

function lineOfNode(source: YamlSource, node: Node | null): number | null {
  const offset = node?.range?.[0];
  return offset === undefined ? null : source.lines.linePos(offset).line + source.lineOffset;
}

/** Line of the key at `path` (or of the item, for a list entry). */
export function lineOfPath(source: YamlSource, path: readonly PropertyKey[]): number | null {
  const at = nodeAt(source.doc, path);
  return lineOfNode(source, at.keyNode ?? at.valueNode);
}

/** Line of the key of the last field in `path` that exists in the file. */
function lineOfKey(source: YamlSource, path: readonly PropertyKey[], name: string): number | null {
  const map = nodeAt(source.doc, path).valueNode;
  if (!isMap(map)) return null;
  const pair = map.items.find((p) => isScalar(p.key) && String(p.key.value) === name);
  return pair ? lineOfNode(source, pair.key as Node) : null;
}

/** Optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The allowed key closest to `key`, when it is close enough to be a typo. */
export function suggestKey(key: string, allowed: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of allowed) {
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best !== null && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : null;
}

function fieldName(path: readonly PropertyKey[]): string {
  return path.length ? path.map(String).join('.') : '(top level)';
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/** The problems of validating `source` with `schema`, each placed on its line, in line order. */
function schemaProblems(schema: z.ZodType, source: YamlSource, issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[]): ConfigProblem[] {
  const name = (path: readonly PropertyKey[]) => fieldName([...prefix, ...path]);
  const problems: ConfigProblem[] = [];
  for (const issue of closestBranches(issues)) {
    const path = issue.path;
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(schema, source.value, path);
      for (const key of issue.keys) {
        const suggestion = suggestKey(key, allowed);
        const where = path.length || prefix.length ? ` in ${name(path)}` : '';
        const hint = suggestion ? ` (did you mean "${suggestion}"?)` : allowed.length ? ` (allowed here: ${allowed.join(', ')})` : '';
        problems.push({ path: name([...path, key]), line: lineOfKey(source, path, key) ?? lineOfPath(source, path), message: `unknown key "${key}"${where}${hint}` });
      }
      continue;
    }
    const parentPath = path.slice(0, -1);
    const parent = valueAt(source.value, parentPath);
    const missing = path.length > 0 && parent !== null && typeof parent === 'object' && !Array.isArray(parent) && !(String(path.at(-1)) in parent);
    if (missing) {
      const parentLine = parentPath.length ? lineOfPath(source, parentPath) : lineOfNode(source, source.doc.contents as Node | null);
      const owner = parentPath.length || prefix.length ? `the mapping "${name(parentPath)}"` : 'the top-level mapping';
      problems.push({
        path: name(path),
        line: parentLine,
        message: `missing required field "${String(path.at(-1))}"${expectedOf(issue.message)} in ${owner}${parentLine ? ` at line ${parentLine}` : ''}`,
      });
      continue;
    }
    problems.push({ path: name(path), line: lineOfPath(source, path), message: issue.message });
  }
  return problems.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
}

/**
 * A value that matches no option of a union: the issues of the option it came closest to (fewest
 * issues), with full paths, instead of zod's bare "Invalid input" (e.g. a typo inside a noise source).
 */
function closestBranches(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue) => {
    // a schema's own message for the union ("expected "all" or a list of …") is kept
    if (issue.code !== 'invalid_union' || !issue.errors?.length || issue.message !== 'Invalid input') return [issue];
    const best = [...issue.errors].sort((a, b) => a.length - b.length)[0];
    if (best.length === 0) return [issue];
    return closestBranches(best.map((inner) => ({ ...inner, path: [...issue.path, ...inner.path] }) as z.core.$ZodIssue));
  });
}

/** " (expected number)" from zod's "Invalid input: expected number, received undefined" (or "… expected 1"); a schema's own message as it is. */
function expectedOf(message: string): string {
  const expected = /^Invalid input: (expected .+?)(, received undefined)?$/.exec(message);
  if (expected) return ` (${expected[1]})`;
  return /received undefined/.test(message) ? '' : ` (${message})`;
}

function capped(lines: readonly string[], total: number, complete = true): string {
  if (total <= lines.length) return lines.join('\n');
  return `${lines.join('\n')}\n… and ${complete ? `${total - lines.length} more` : 'more (checking stopped here)'}`;
}

/**
 * The ConfigError listing `problems` (the first MAX_LISTED_ERRORS, then a count). `complete: false`
 * when the caller stopped looking after too many (a large seed pool), so there is no exact count.
 */
export function configErrorOf(file: string, problems: readonly ConfigProblem[], complete = true): ConfigError {
  const listed = problems.slice(0, MAX_LISTED_ERRORS).map((p) => `${file}${p.line ? `:${p.line}` : ''}: ${p.path === '(yaml)' ? '' : `${p.path}: `}${p.message}`);
  return new ConfigError(capped(listed, problems.length, complete), problems);
}

/**
 * Validates a parsed YAML source; the result, or the problems each on its line. `prefix` is where the
 * text sits in its file when it is a part of it (["seeds", 17] for one seed of a pool).
 */
export function validateYaml<S extends z.ZodType>(schema: S, source: YamlSource, prefix: readonly PropertyKey[] = []): { ok: true; data: z.output<S> } | { ok: false; problems: ConfigProblem[] } {
  const result = schema.safeParse(source.value);
  if (result.success) return { ok: true, data: result.data };
  return { ok: false, problems: schemaProblems(schema, source, result.error.issues, prefix) };
}

/** Parses YAML text with a schema; errors name the file, the line, the field and what was expected. */
export function parseYaml<S extends z.ZodType>(schema: S, text: string, file: string): z.output<S> {
  const result = validateYaml(schema, parseYamlSource(text, file));
  if (!result.ok) throw configErrorOf(file, result.problems);
  return result.data;
}

/** A validated YAML file that can still place a field on its line, for checks beyond the schema (a DBC lookup, a drive that must fit its route). */
export interface LoadedYaml<T> {
  data: T;
  /** "FILE:LINE" of a field ("signals.gear.values.P"), or "FILE" when it is not in the file */
  at(field: string): string;
}

/** Reads (at most `limit`, the config cap by default) and parses a YAML file with a schema, keeping the positions. `what` names the file's role in errors ("campaign config"). */
export function loadYamlDocument<S extends z.ZodType>(schema: S, path: string, what: string, limit: FileLimit = FILE_LIMITS.config): LoadedYaml<z.output<S>> {
  const source = parseYamlSource(readBoundedText(path, what, limit), path);
  const result = validateYaml(schema, source);
  if (!result.ok) throw configErrorOf(path, result.problems);
  warnRenamedFields(path, source.value, renamedFieldsOf(schema));
  return {
    data: result.data,
    at(field) {
      const line = lineOfPath(source, field.split('.').map((key) => (/^\d+$/.test(key) ? Number(key) : key)));
      return line ? `${path}:${line}` : path;
    },
  };
}

/** Reads (at most `limit`, the config cap by default) and parses a YAML file with a schema. `what` names the file's role in errors ("campaign config"). */
export function loadYaml<S extends z.ZodType>(schema: S, path: string, what: string, limit: FileLimit = FILE_LIMITS.config): z.output<S> {
  return loadYamlDocument(schema, path, what, limit).data;
}
