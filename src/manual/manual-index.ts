import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { FILE_LIMITS, readBoundedText } from '../domain/input-files.ts';
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
    // one by one: a spread of a 100 MB chapter's chunks would pass more arguments than the stack holds
    for (const chunk of own) chunks.push(chunk);
    sources.push({ file: manual.source, format: manual.format, sha256: createHash('sha256').update(manual.bytes).digest('hex'), chunks: own.length });
  }
  return { version: MANUAL_INDEX_VERSION, createdAt: new Date().toISOString(), sources, chunks };
}

/**
 * Writes the index as one JSON document, a chunk at a time: the index of a 100 MB chapter is larger
 * than the longest string JavaScript can hold, so it is never one string.
 */
export function saveManualIndex(index: ManualIndex, path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const { chunks, ...head } = index;
  const fd = openSync(path, 'w');
  try {
    const opening = JSON.stringify({ ...head, chunks: [] });
    // '…,"chunks":[' then the chunks, then ']}'
    writeSync(fd, opening.slice(0, -2));
    let pending: string[] = [];
    chunks.forEach((chunk, i) => {
      pending.push(`${i ? ',' : ''}${JSON.stringify(chunk)}`);
      if (pending.length === 1000) {
        writeSync(fd, pending.join(''));
        pending = [];
      }
    });
    writeSync(fd, pending.join(''));
    writeSync(fd, ']}\n');
  } finally {
    closeSync(fd);
  }
}

export function loadManualIndex(path: string): ManualIndex {
  if (!existsSync(path)) throw new ManualFormatError(path, 'no manual index here; build one with `icabench manual index FILE…`');
  const text = readBoundedText(path, 'manual index', FILE_LIMITS.manualIndex);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManualFormatError(path, `not valid JSON: ${(error as Error).message}`);
  }
  return parseOrThrow(ManualIndexSchema, raw, path);
}
