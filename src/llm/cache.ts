import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ChatRequest, ChatResponse } from './types.ts';

/**
 * Request cache for development runs (off by default in campaigns). The key covers everything
 * that shapes the answer, including the repeat index: repeats for pass^k must stay independent
 * draws, so repeat 1 never reuses the answer cached for repeat 0.
 */
export interface RequestCache {
  get(key: string): Promise<ChatResponse | undefined>;
  set(key: string, response: ChatResponse): Promise<void>;
}

export function requestCacheKey(ref: string, request: ChatRequest): string {
  const material = JSON.stringify({
    ref,
    messages: request.messages,
    jsonSchema: request.jsonSchema ?? null,
    temperature: request.temperature ?? null,
    seed: request.seed ?? null,
    maxTokens: request.maxTokens ?? null,
    repeat: request.repeat ?? 0,
  });
  return createHash('sha256').update(material).digest('hex');
}

const CachedResponseSchema = z.object({
  text: z.string(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  latencyMs: z.number(),
  truncated: z.boolean().optional(),
  computeMs: z.number().optional(),
});

export class MemoryRequestCache implements RequestCache {
  private readonly entries = new Map<string, ChatResponse>();
  async get(key: string): Promise<ChatResponse | undefined> {
    return this.entries.get(key);
  }
  async set(key: string, response: ChatResponse): Promise<void> {
    this.entries.set(key, response);
  }
}

/** One JSON file per key under `dir`; survives between dev runs. Unreadable entries count as misses. */
export class FileRequestCache implements RequestCache {
  constructor(readonly dir: string) {}

  async get(key: string): Promise<ChatResponse | undefined> {
    try {
      const parsed = CachedResponseSchema.safeParse(JSON.parse(await readFile(join(this.dir, `${key}.json`), 'utf8')));
      return parsed.success ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  async set(key: string, response: ChatResponse): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const file = join(this.dir, `${key}.json`);
    const temp = `${file}.${process.pid}.tmp`;
    const { cached: _cached, ...stored } = response;
    await writeFile(temp, JSON.stringify(stored));
    await rename(temp, file);
  }
}
