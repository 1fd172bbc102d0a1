import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseOrThrow } from '../domain/validation.ts';
import { chunkManual } from './chunks.ts';
import { ManualFormatError } from './ingest/errors.ts';
import { readManualFile } from './ingest/read.ts';
import { MANUAL_INDEX_VERSION, ManualIndexSchema, type ManualChunk, type ManualIndex } from './model.ts';

/** Where a workspace keeps its manual index (beside icabench.db). */
export function workspaceManualIndexPath(workspace: string): string {
  return join(resolve(workspace), 'manual-index.json');
}

/** Reads and chunks every file; a chunk id that two files share is an error naming both. */
export async function buildManualIndex(files: readonly string[]): Promise<ManualIndex> {
  if (files.length === 0) throw new ManualFormatError('(no files)', 'give at least one manual file');
  const chunks: ManualChunk[] = [];
  const sources: ManualIndex['sources'] = [];
  const owner = new Map<string, string>();
  for (const file of files) {
    const manual = await readManualFile(file);
    const own = chunkManual(manual);
    for (const chunk of own) {
      const first = owner.get(chunk.id);
      if (first) throw new ManualFormatError(file, `chunk id "${chunk.id}" is also used in ${first}; ids must be unique across the manual`);
      owner.set(chunk.id, manual.source);
    }
    chunks.push(...own);
    sources.push({ file: manual.source, format: manual.format, sha256: createHash('sha256').update(manual.bytes).digest('hex'), chunks: own.length });
  }
  return { version: MANUAL_INDEX_VERSION, createdAt: new Date().toISOString(), sources, chunks };
}

export function saveManualIndex(index: ManualIndex, path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, `${JSON.stringify(index)}\n`);
}

export function loadManualIndex(path: string): ManualIndex {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new ManualFormatError(path, 'no manual index here; build one with `icabench manual index FILE…`');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManualFormatError(path, `not valid JSON: ${(error as Error).message}`);
  }
  return parseOrThrow(ManualIndexSchema, raw, path);
}
