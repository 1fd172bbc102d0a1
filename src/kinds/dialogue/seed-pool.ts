import { z } from 'zod';
import { SeedPhraseSchema, type SeedPhrase } from '../../domain/conversation.ts';
import { ConfigError, configErrorOf, MAX_CONFIG_BYTES, MAX_LISTED_ERRORS, parseYaml, parseYamlSource, validateYaml, type ConfigProblem } from '../../config/yaml.ts';
import { FILE_LIMITS, readBoundedBytes } from '../../domain/input-files.ts';
import { createRng } from '../../domain/rng.ts';

/**
 * Seed pools can be large (100,000 seeds, tens of MB), and a run uses only the seeds its plan draws.
 * A pool in the usual layout (a block list under `seeds:`) is indexed by a line scan and each seed
 * is parsed and validated when the sampling first reaches it; above MAX_CONFIG_BYTES the walk stops
 * when the plan has its seeds, so a 10-conversation run on a 100,000-seed pool parses about ten. Any other layout is parsed whole (it must then fit
 * MAX_CONFIG_BYTES). The file itself is capped at FILE_LIMITS.seedPool.
 */


export const SeedPoolSchema = z.strictObject({ seeds: z.array(SeedPhraseSchema).min(1) });

export interface SeedSelection {
  /** only these seed ids (pool order), when given */
  seedIds?: readonly string[];
  /** the number of requests a seed may span */
  domains: { min: number; max: number };
  /** the campaign's sampling seed: it shuffles the pool */
  seed: number;
  /** conversations planned: the sampling needs at most this many distinct seeds */
  needed: number;
  /** where the pool is named ("FILE:LINE" of a config's `seeds`), for the error when it cannot be read */
  namedAt?: string;
}

/** One seed of the pool, parsed when first asked for. */
type Entry = () => SeedPhrase;

/**
 * The seeds a campaign's plan uses, in sampling order: the pool (or the `seedIds` seeds, in pool order)
 * is shuffled with the sampling seed and walked, keeping the seeds that span `domains`. A pool up to
 * MAX_CONFIG_BYTES is walked to the end (every seed checked); a larger one until `needed` seeds are
 * found. Conversation i uses seed i mod (the number returned).
 */
export function loadSeedPool(path: string, selection: SeedSelection): SeedPhrase[] {
  const { entries, large } = poolEntries(path, selection.namedAt ? `seed pool named at ${selection.namedAt}` : 'seed pool');
  // a pool of a config's size is read and checked whole (every seed validated, the run's seeds are all
  // the eligible ones); a larger one only as far as the plan needs
  const needed = large ? selection.needed : Infinity;
  const problems: ConfigProblem[] = [];
  const parse = (entry: Entry): SeedPhrase | null => {
    try {
      return entry();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      if (problems.length > MAX_LISTED_ERRORS) throw configErrorOf(path, problems, false);
      return null;
    }
  };
  let candidates: Entry[] = entries;
  if (selection.seedIds) {
    const wanted = new Set(selection.seedIds);
    const found = new Map<string, SeedPhrase>();
    candidates = [];
    for (const entry of entries) {
      const seed = parse(entry);
      if (seed && wanted.has(seed.id) && !found.has(seed.id)) {
        found.set(seed.id, seed);
        candidates.push(() => seed);
      }
    }
    if (problems.length) throw configErrorOf(path, problems);
    const unknown = selection.seedIds.filter((id) => !found.has(id));
    if (unknown.length) throw new ConfigError(`seedIds: ${unknown.join(', ')} not found in ${path}`);
  }
  const chosen: SeedPhrase[] = [];
  for (const index of createRng(selection.seed).shuffle(candidates.map((_, i) => i))) {
    const seed = parse(candidates[index]);
    if (seed && seed.requests.length >= selection.domains.min && seed.requests.length <= selection.domains.max) chosen.push(seed);
    if (chosen.length >= needed) break;
  }
  if (problems.length) throw configErrorOf(path, problems);
  if (chosen.length === 0) throw new ConfigError(`domains: no seed in ${path} spans ${selection.domains.min}–${selection.domains.max} requests`);
  return chosen;
}

/** The entries of the pool: indexed by line when it has the usual layout, else parsed whole; `large` above MAX_CONFIG_BYTES. */
function poolEntries(path: string, what: string): { entries: Entry[]; large: boolean } {
  const bytes = readBoundedBytes(path, what, FILE_LIMITS.seedPool);
  const large = bytes.length > MAX_CONFIG_BYTES;
  const indexed = indexBlockList(bytes, path);
  if (indexed) return { entries: indexed, large };
  if (large) {
    throw new ConfigError(`${path}: a seed pool larger than 1 MiB must be a block list under "seeds:" (one "- id: …" entry per seed, as in bench-configs/seeds/in-car.yaml)`);
  }
  return { entries: parseYaml(SeedPoolSchema, bytes.toString('utf8'), path).seeds.map((seed) => () => seed), large };
}

const NEWLINE = 0x0a;
const SPACE = 0x20;
const HASH = 0x23;
const CR = 0x0d;

/**
 * Splits `seeds:\n  - …\n  - …` into one byte range per item by indentation, without parsing or
 * decoding the file (a 40 MB pool stays one buffer). Returns null when the text has another layout
 * (a flow list, other top-level content), which is then parsed whole.
 */
function indexBlockList(bytes: Buffer, path: string): Entry[] | null {
  // the head: blank lines, comments, a document marker, then "seeds:" and the first item, decoded as text
  let pos = 0;
  let line = 1;
  let indent: string | null = null;
  let sawKey = false;
  while (pos < bytes.length && indent === null) {
    const end = lineEnd(bytes, pos);
    const text = bytes.toString('utf8', pos, end).replace(/\r$/, '');
    if (text.trim() === '' || text.trimStart().startsWith('#') || (!sawKey && text === '---')) {
      pos = end + 1;
      line++;
      continue;
    }
    if (!sawKey) {
      if (!/^seeds:\s*(#.*)?$/.test(text)) return null;
      sawKey = true;
      pos = end + 1;
      line++;
      continue;
    }
    const item = /^( *)- /.exec(text);
    if (!item) return null;
    indent = item[1];
  }
  if (indent === null) return null;
  const itemStart = Buffer.from(`${indent}- `);
  const continuation = Buffer.from(`${indent}  `);
  const items: Array<{ start: number; line: number }> = [];
  for (; pos < bytes.length; line++) {
    const end = lineEnd(bytes, pos);
    if (startsWith(bytes, pos, end, itemStart)) items.push({ start: pos, line });
    else if (!blankOrComment(bytes, pos, end) && !startsWith(bytes, pos, end, continuation)) return null; // something besides the list
    pos = end + 1;
  }
  return items.map(({ start, line: first }, n) => {
    const end = n + 1 < items.length ? items[n + 1].start : bytes.length;
    let cached: SeedPhrase | undefined;
    return () => {
      if (cached) return cached;
      // the item as a mapping at its own indentation (the "- " becomes two spaces, columns kept), its lines numbered as in the file
      const text = `${indent}  ${bytes.toString('utf8', start + itemStart.length, end)}`;
      const result = validateYaml(SeedPhraseSchema, parseYamlSource(text, path, first - 1), ['seeds', n]);
      if (!result.ok) throw new ConfigError('', result.problems);
      cached = result.data;
      return cached;
    };
  });
}

function lineEnd(bytes: Buffer, pos: number): number {
  const end = bytes.indexOf(NEWLINE, pos);
  return end < 0 ? bytes.length : end;
}

function startsWith(bytes: Buffer, pos: number, end: number, prefix: Buffer): boolean {
  return end - pos >= prefix.length && bytes.compare(prefix, 0, prefix.length, pos, pos + prefix.length) === 0;
}

function blankOrComment(bytes: Buffer, pos: number, end: number): boolean {
  let i = pos;
  while (i < end && bytes[i] === SPACE) i++;
  return i === end || bytes[i] === CR || bytes[i] === HASH;
}
