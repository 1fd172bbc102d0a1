import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { loadYaml } from '../config/yaml.ts';
import { parseModelRef, resolveRefAgainst } from './modelRef.ts';
import { packagePath } from '../domain/package-files.ts';

/** A model the bench uses: a model reference (Ollama tag, OpenAI-compatible endpoint or GGUF file) or a plain file (speech). */
export const ModelEntrySchema = z
  .strictObject({
    /** "ollama:…", "openai-compat:…#…" or "gguf:…" (for simulator, judge, embedding) */
    ref: z.string().optional(),
    /** a model file (speech models, or the file behind a gguf ref), relative to the manifest */
    file: z.string().optional(),
    /** lowercase hex sha256 of the file; checked by verifyManifestFiles and `icabench doctor` */
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex characters').optional(),
    /** where the file comes from, for the person installing it */
    source: z.string().optional(),
    notes: z.string().optional(),
  })
  .refine((entry) => entry.ref !== undefined || entry.file !== undefined, 'expected "ref" or "file"')
  .superRefine((entry, ctx) => {
    if (entry.ref === undefined) return;
    try {
      parseModelRef(entry.ref);
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['ref'], message: (error as Error).message });
    }
  });
export type ModelEntry = z.infer<typeof ModelEntrySchema>;

export const ModelSetSchema = z.strictObject({
  description: z.string().optional(),
  simulator: ModelEntrySchema.optional(),
  judge: ModelEntrySchema.optional(),
  embedding: ModelEntrySchema.optional(),
  speech: z.record(z.string(), ModelEntrySchema).optional(),
  /** sampling defaults follow the paper: temperature 0, a fixed seed where the server takes one */
  temperature: z.number().min(0).max(2).default(0),
  seed: z.number().int().optional(),
});
export type ModelSet = z.infer<typeof ModelSetSchema>;

export const ModelManifestSchema = z.strictObject({
  version: z.literal(1),
  sets: z.record(z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'expected a lowercase set name'), ModelSetSchema),
});
export type ModelManifest = z.infer<typeof ModelManifestSchema> & { path: string };

/** Reads a YAML or JSON manifest (JSON is YAML); errors name the file, the line and the field. Relative file paths and gguf: references resolve against the manifest's folder. */
export async function loadModelManifest(path: string): Promise<ModelManifest> {
  return readModelManifest(path);
}

/** models/default.yaml of this checkout: the model sets the bench ships with. */
export const DEFAULT_MANIFEST = packagePath('models', 'default.yaml');
/** The set of models/default.yaml that holds the methods' own models (the papers' sentence-embedding model among them). */
export const METHOD_MODEL_SET = 'paper';

/**
 * The sentence-embedding model file the manifest's method set names (absolute), or undefined when
 * it names none. Used wherever a run embeds text and its config names no model of its own (failure
 * diversity, manual retrieval): the model is used when the file is there, else the labelled lexical
 * fallback runs (src/embedding/index.ts).
 */
export function methodEmbeddingModel(manifestPath: string = DEFAULT_MANIFEST): string | undefined {
  return readModelManifest(manifestPath).sets[METHOD_MODEL_SET]?.embedding?.file;
}

function readModelManifest(path: string): ModelManifest {
  const manifest = loadYaml(ModelManifestSchema, path, 'model manifest');
  const base = dirname(resolve(path));
  for (const set of Object.values(manifest.sets)) {
    for (const entry of [set.simulator, set.judge, set.embedding, ...Object.values(set.speech ?? {})]) {
      if (entry?.file) entry.file = resolve(base, entry.file);
      if (entry?.ref) entry.ref = resolveRefAgainst(entry.ref, base);
    }
  }
  return { ...manifest, path };
}

export async function sha256OfFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export interface ManifestFileCheck {
  set: string;
  role: string;
  file: string;
  status: 'ok' | 'missing' | 'checksum_mismatch' | 'no_checksum';
  detail: string;
}

/** Checks every file entry of a manifest: present, and matching its sha256 when one is given. */
export async function verifyManifestFiles(manifest: ModelManifest): Promise<ManifestFileCheck[]> {
  const checks: ManifestFileCheck[] = [];
  for (const [setName, set] of Object.entries(manifest.sets)) {
    const entries: Array<[string, ModelEntry | undefined]> = [
      ['simulator', set.simulator],
      ['judge', set.judge],
      ['embedding', set.embedding],
      ...Object.entries(set.speech ?? {}).map(([name, entry]): [string, ModelEntry] => [`speech.${name}`, entry]),
    ];
    for (const [role, entry] of entries) {
      if (!entry?.file) continue;
      let actual: string;
      try {
        actual = await sha256OfFile(entry.file);
      } catch {
        checks.push({ set: setName, role, file: entry.file, status: 'missing', detail: `not found${entry.source ? `; get it from ${entry.source}` : ''}` });
        continue;
      }
      if (!entry.sha256) checks.push({ set: setName, role, file: entry.file, status: 'no_checksum', detail: `present, sha256 ${actual} (add it to the manifest)` });
      else if (entry.sha256 !== actual) checks.push({ set: setName, role, file: entry.file, status: 'checksum_mismatch', detail: `expected ${entry.sha256}, file has ${actual}` });
      else checks.push({ set: setName, role, file: entry.file, status: 'ok', detail: 'present, checksum matches' });
    }
  }
  return checks;
}
