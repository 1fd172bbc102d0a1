import { resolve } from 'node:path';
import type { Command } from 'commander';
import { chunkManual } from '../../manual/chunks.ts';
import { ManualCorpus } from '../../manual/corpus.ts';
import { readManualFile } from '../../manual/ingest/read.ts';
import { buildManualIndex, loadManualIndex, saveManualIndex, workspaceManualIndexPath } from '../../manual/manual-index.ts';
import { generateDeterministicTestSet, onePerSection, writeTestSet, type TestItem } from '../../manual/testset.ts';
import { generateTestSetWithModel, generatorNeedsModel } from '../../manual/generate.ts';
import { LlmSettingsSchema } from '../../llm/settings.ts';
import { manualFiles } from '../../manual/files.ts';

export function registerManualCommands(program: Command): void {
  const manual = program.command('manual').description("owner's-manual answers: ingest manuals, print their warnings, generate test sets (docs/manual-qa.md)");

  manual
    .command('index')
    .description('read manual files (IBIKUS XML, Markdown, HTML, PDF; a folder = its files) into chunks and store the index with the workspace')
    .argument('<files...>', 'manual files or folders')
    .option('--workspace <dir>', 'workspace the index is stored with', 'workspace')
    .option('--out <file>', 'write the index here instead of <workspace>/manual-index.json')
    .action(async (files: string[], options: { workspace: string; out?: string }) => {
      const index = await buildManualIndex(manualFiles(files));
      const out = options.out ? resolve(options.out) : workspaceManualIndexPath(options.workspace);
      saveManualIndex(index, out);
      const count = (kind: string) => index.chunks.filter((c) => c.kind === kind).length;
      console.log(`${index.sources.length} files, ${index.chunks.length} chunks (${count('section')} sections, ${count('procedure')} procedures, ${count('warning')} warnings) → ${out}`);
    });

  manual
    .command('warnings')
    .description('print every Warning/Notice/Danger block of the files: id, type, chapter, headingPath, text')
    .argument('<files...>', 'manual files or folders')
    .option('--json', 'one JSON object per line (JSON Lines)')
    .action(async (files: string[], options: { json?: boolean }) => {
      for (const file of manualFiles(files)) {
        for (const chunk of chunkManual(await readManualFile(file))) {
          if (chunk.kind !== 'warning') continue;
          const record = { id: chunk.id, type: chunk.warningType, chapter: chunk.chapter, headingPath: chunk.headingPath, text: chunk.text, source: chunk.source };
          console.log(options.json ? JSON.stringify(record) : `${record.type}\t${record.id}\t${record.headingPath.join(' › ')}\t${record.text}`);
        }
      }
    });

  manual
    .command('testset')
    .description('generate the deterministic test set (procedures, warnings, definitions) as JSONL')
    .argument('[files...]', 'manual files or folders (default: the workspace index)')
    .requiredOption('--out <file>', 'test set file (.jsonl)')
    .option('--workspace <dir>', 'workspace holding manual-index.json', 'workspace')
    .option('--one-per-section', "one question per manual section (a seeded pick), as GEAR's evaluation set")
    .option('--seed <n>', 'seed of the one-per-section pick', (v) => integerOption('--seed', v), 42)
    .action(async (files: string[], options: { out: string; workspace: string; onePerSection?: boolean; seed: number }) => {
      const index = files.length ? await buildManualIndex(manualFiles(files)) : loadManualIndex(workspaceManualIndexPath(options.workspace));
      const all = generateDeterministicTestSet(new ManualCorpus(index));
      const items = options.onePerSection ? onePerSection(all, options.seed) : all;
      await writeCounted(options.out, items);
    });

  manual
    .command('generate')
    .description("GEAR's test-set generator with a model: questions per section, each answer from a second call with the two related sections, key facts by SplitTag")
    .argument('[files...]', 'manual files or folders (default: the workspace index)')
    .requiredOption('--out <file>', 'test set file (.jsonl)')
    .option('--model <ref>', 'the generating model (ollama:<tag>, openai-compat:<base-url>#<model>, gguf:<path>); required')
    .option('--sections <n>', 'generate from at most this many sections (a seeded sample; default all)', (v) => integerOption('--sections', v))
    .option('--seed <n>', 'seed of the section sample and the one-per-section pick', (v) => integerOption('--seed', v), 42)
    .option('--one-per-section', 'keep one generated question per section (a seeded pick)')
    .option('--embedding-model <path>', 'ONNX sentence-embedding model for the related sections (default: the one models/default.yaml names, else TF-IDF)')
    .option('--ollama-host <url>', 'Ollama server (default OLLAMA_HOST, else 127.0.0.1:11434)')
    .option('--workspace <dir>', 'workspace holding manual-index.json', 'workspace')
    .action(async (files: string[], options: { out: string; model?: string; sections?: number; seed: number; onePerSection?: boolean; embeddingModel?: string; ollamaHost?: string; workspace: string }) => {
      // said before anything is read: offline there is no model to generate with
      if (!options.model) throw new Error(generatorNeedsModel('--model'));
      const index = files.length ? await buildManualIndex(manualFiles(files)) : loadManualIndex(workspaceManualIndexPath(options.workspace));
      const llm = LlmSettingsSchema.parse(options.ollamaHost ? { ollamaHost: options.ollamaHost } : {});
      const log = (line: string) => console.error(line);
      const { items, record } = await generateTestSetWithModel(new ManualCorpus(index), { model: options.model, sections: options.sections, seed: options.seed }, { llm, embeddingModel: options.embeddingModel && resolve(options.embeddingModel), log });
      await writeCounted(options.out, options.onePerSection ? onePerSection(items, options.seed) : items);
      console.log(`${record.generator}: ${record.sections} sections, related sections by ${record.embedder}; ${record.failures.length} failed calls`);
    });
}

function integerOption(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name}: expected a whole number, got "${value}"`);
  return n;
}

/** Writes a test set and prints how many questions of each kind went where. */
async function writeCounted(out: string, items: readonly TestItem[]): Promise<void> {
  const n = await writeTestSet(resolve(out), items);
  const kinds = new Map<string, number>();
  for (const item of items) kinds.set(item.kind, (kinds.get(item.kind) ?? 0) + 1);
  console.log(`${n} questions (${[...kinds].map(([k, c]) => `${c} ${k}`).join(', ')}) → ${resolve(out)}`);
}
