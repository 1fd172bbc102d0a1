import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** ../shared/data/opendbc, beside the repository (as in CI). */
export const OPENDBC_DIR = resolve(import.meta.dirname, '../../../shared/data/opendbc');
export const OPENDBC_FILES = [
  'toyota_prius_2010_pt.dbc',
  'hyundai_2015_ccan.dbc',
  'tesla_can.dbc',
  'gm_global_a_high_voltage_management.dbc',
];

export function opendbcPath(file: string): string {
  const path = resolve(OPENDBC_DIR, file);
  if (!existsSync(path)) throw new Error(`test data missing: ${path} (the shared/ data folder must sit beside the repository)`);
  return path;
}

/** Deterministic PRNG (mulberry32) so property tests are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
