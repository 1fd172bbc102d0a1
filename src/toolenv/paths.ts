import { resolve } from 'node:path';

/** The vendored CAR-bench corpus (MIT, provenance in data/carbench/SOURCE.md). */
export const CARBENCH_DIR = resolve(import.meta.dirname, '../../data/carbench');

export const carbenchPath = (relative: string): string => resolve(CARBENCH_DIR, relative);
