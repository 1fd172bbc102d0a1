import { resolve } from 'node:path';
import { packagePath } from '../domain/package-files.ts';

/** The vendored CAR-bench corpus (MIT, provenance in data/carbench/SOURCE.md). */
export const CARBENCH_DIR = packagePath('data', 'carbench');

export const carbenchPath = (relative: string): string => resolve(CARBENCH_DIR, relative);
