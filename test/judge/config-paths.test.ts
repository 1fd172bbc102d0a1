import { describe, expect, it } from 'vitest';
import { CampaignConfigSchema } from '../../src/kinds/dialogue/config.ts';
import { absoluteConfigPaths, disallowedPaths } from '../../src/server/config-paths.ts';
import { dialogueKind } from '../../src/kinds/dialogue/kind.ts';

const roots = { configsDir: '/bench/bench-configs', readable: ['/bench/bench-configs', '/bench/models', '/ws'], writable: ['/ws'] };
const config = (extra: Record<string, unknown>) => CampaignConfigSchema.parse({ name: 't', seeds: 'seeds/in-car.yaml', conversations: 1, ...extra });

describe('configs started from the bench app: the files technique judges and the diversity model read', () => {
  it('refuses a technique judge or an embedding model outside the allowed folders', () => {
    const bad = config({ judges: ['oracle', 'sc-5:gguf:/etc/judge.gguf', 'ar:gguf:../models/a.gguf+gguf:/tmp/b.gguf'], diversity: { embeddingModel: '/root/minilm' } });
    expect(disallowedPaths(dialogueKind.pathFields(bad), roots).map((e) => e.path)).toEqual(['judges.1', 'judges.2', 'diversity.embeddingModel']);
    const good = config({ judges: [{ technique: 'mad', model: 'gguf:../models/judge.gguf' }], diversity: { embeddingModel: '../models/all-MiniLM-L6-v2' } });
    expect(disallowedPaths(dialogueKind.pathFields(good), roots)).toEqual([]);
  });

  it('the materialized copy names the same files by absolute path, in the reference form', () => {
    const copy = absoluteConfigPaths(dialogueKind, config({ judges: ['ar:gguf:../models/a.gguf+ollama:qwen3:14b+gguf:../models/b.gguf', 'oracle'], diversity: { embeddingModel: '../models/m' } }), roots.configsDir);
    expect(copy.judges).toEqual(['ar:gguf:/bench/models/a.gguf+ollama:qwen3:14b+gguf:/bench/models/b.gguf', 'oracle']);
    expect((copy.diversity as { embeddingModel: string }).embeddingModel).toBe('/bench/models/m');
  });
});
