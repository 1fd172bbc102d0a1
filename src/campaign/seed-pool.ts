import { z } from 'zod';
import { SeedPhraseSchema, type SeedPhrase } from '../domain/conversation.ts';
import { ConfigError, configErrorOf, MAX_CONFIG_BYTES, MAX_LISTED_ERRORS, parseYaml, parseYamlSource, readBoundedText, validateYaml, type ConfigProblem } from '../config/yaml.ts';
import { createRng } from '../world/rng.ts';

/**
 * Seed pools can be large (100,000 seeds, tens of MB), and a run uses only the seeds its plan draws.
 * A pool in the usual layout (a block list under `seeds:`) is indexed by a line scan and each seed
 * is parsed and validated when the sampling first reaches it, so a 10-conversation run on a
 * 100,000-seed pool parses about ten seeds. Any other layout is parsed whole (it must then fit
 * MAX_CONFIG_BYTES). The file itself is capped at MAX_SEED_POOL_BYTES.
 */

/** The largest seed pool file read (about 150,000 seeds of the in-car pool's size). */
export const MAX_SEED_POOL_BYTES = 64 * 1024 * 1024;

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
}

/** One seed of the pool, parsed when first asked for. */
type Entry = () => SeedPhrase;

/**
 * The seeds a campaign's plan uses, in sampling order: the pool (or the `seedIds` seeds, in pool order)
 * is shuffled with the sampling seed and walked, keeping the seeds that span `domains`, until `needed`
 * are found or the pool is exhausted. Conversation i uses seed i mod (the number returned).
 */
export function loadSeedPool(path: string, selection: SeedSelection): SeedPhrase[] {
  const entries = poolEntries(path);
  const problems: ConfigProblem[] = [];
  const parse = (entry: Entry): SeedPhrase | null => {
    try {
      return entry();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      if (problems.length > MAX_LISTED_ERRORS) throw configErrorOf(path, problems);
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
    if (chosen.length >= selection.needed) break;
  }
  if (problems.length) throw configErrorOf(path, problems);
  if (chosen.length === 0) throw new ConfigError(`domains: no seed in ${path} spans ${selection.domains.min}–${selection.domains.max} requests`);
  return chosen;
}

/** The entries of the pool: indexed by line when it has the usual layout, else parsed whole. */
function poolEntries(path: string): Entry[] {
  const text = readBoundedText(path, 'seed pool', MAX_SEED_POOL_BYTES);
  const indexed = indexBlockList(text, path);
  if (indexed) return indexed;
  if (Buffer.byteLength(text) > MAX_CONFIG_BYTES) {
    throw new ConfigError(`${path}: a seed pool larger than 1 MiB must be a block list under "seeds:" (one "- id: …" entry per seed, as in bench-configs/seeds/in-car.yaml)`);
  }
  return parseYaml(SeedPoolSchema, text, path).seeds.map((seed) => () => seed);
}

const TOP_KEY = /^seeds:\s*(#.*)?$/;
const ITEM = /^( *)- /;

/**
 * Splits `seeds:\n  - …\n  - …` into one text per item by indentation, without parsing. Returns null
 * when the text has another layout (a flow list, other top-level content), which is then parsed whole.
 */
function indexBlockList(text: string, path: string): Entry[] | null {
  const lines = text.split('\n');
  let i = 0;
  const skippable = (line: string) => line.trim() === '' || line.trimStart().startsWith('#') || line === '---';
  while (i < lines.length && skippable(lines[i])) i++;
  if (i >= lines.length || !TOP_KEY.test(lines[i])) return null;
  i++;
  while (i < lines.length && skippable(lines[i])) i++;
  const first = i < lines.length ? ITEM.exec(lines[i]) : null;
  if (!first) return null;
  const indent = first[1];
  const itemStart = `${indent}- `;
  const starts: number[] = [];
  for (; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith(itemStart)) starts.push(i);
    else if (!skippable(line) && !line.startsWith(`${indent}  `) && !(indent === '' && line.startsWith('  '))) return null; // something besides the list
  }
  return starts.map((start, n) => {
    const end = n + 1 < starts.length ? starts[n + 1] : lines.length;
    let cached: SeedPhrase | undefined;
    return () => {
      if (cached) return cached;
      // the item as a mapping at its own indentation (columns kept), its lines numbered as in the file
      const item = `${indent}  ${lines[start].slice(itemStart.length)}\n${lines.slice(start + 1, end).join('\n')}`;
      const source = parseYamlSource(item, path, start);
      const result = validateYaml(SeedPhraseSchema, source, ['seeds', n]);
      if (!result.ok) throw new ConfigError('', result.problems);
      cached = result.data;
      return cached;
    };
  });
}
