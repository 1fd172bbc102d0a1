import { resolve } from 'node:path';
import type { Command } from 'commander';
import { chunkManual } from '../../manual/chunks.ts';
import { ManualCorpus } from '../../manual/corpus.ts';
import { readManualFile } from '../../manual/ingest/read.ts';
import { buildManualIndex, loadManualIndex, saveManualIndex, workspaceManualIndexPath } from '../../manual/manual-index.ts';
import { generateDeterministicTestSet, writeTestSet } from '../../manual/testset.ts';
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
    .action(async (files: string[], options: { out: string; workspace: string }) => {
      const index = files.length ? await buildManualIndex(manualFiles(files)) : loadManualIndex(workspaceManualIndexPath(options.workspace));
      const items = generateDeterministicTestSet(new ManualCorpus(index));
      const n = await writeTestSet(resolve(options.out), items);
      const kinds = new Map<string, number>();
      for (const item of items) kinds.set(item.kind, (kinds.get(item.kind) ?? 0) + 1);
      console.log(`${n} questions (${[...kinds].map(([k, c]) => `${c} ${k}`).join(', ')}) → ${resolve(options.out)}`);
    });
}
