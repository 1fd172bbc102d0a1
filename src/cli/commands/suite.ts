import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pinnedSuiteName, SUITES_DIR_ENV, suitesFolder } from '../../suite/folder.ts';
import type { Command } from 'commander';
import { loadSuite, type SuiteFile } from '../../suite/format.ts';
import { suiteFiles } from '../../suite/split.ts';
import { importKvret, importTranscripts } from '../../suite/import.ts';
import { addToSuiteYaml, pinConversation, pinnedSuiteYaml } from '../../suite/pin.ts';
import { openStore } from '../outputs.ts';
import { turnsWithoutGrounds } from '../../kinds/suite/grounds-preview.ts';
import { holdsConversations } from '../../domain/run-items.ts';

/** What an imported suite's turns will give without a model judge: the turns the oracle has no grounds for (docs/suites.md). */
function groundsNote(path: string): string {
  const { turns, withoutGrounds } = turnsWithoutGrounds(loadSuite(path));
  if (withoutGrounds === 0) return `the oracle has grounds for all ${turns} turns`;
  return `${withoutGrounds} of ${turns} turns ask for something the bench does not recognise and carry no expectations: unless the unit answers them with a fallback or their reference reply decides the answer, the oracle leaves them undecided and their conversations inconclusive (needs review). Add a model judge, \`means:\` or \`expect:\` to get verdicts (docs/suites.md, "Undecided turns and inconclusive conversations")`;
}

/** Writes a new file, refusing to overwrite one (a suite may hold a person's edits). */
function writeNew(path: string, text: string): void {
  if (existsSync(path)) throw new Error(`${path} exists; choose another --out, or add to it with --into`);
  mkdirSync(dirname(resolve(path)), { recursive: true });
  writeFileSync(path, text);
}

/** Writes an imported suite as one file, or several that `suite check` reads back (src/suite/split.ts); none when any exists already. */
function writeImported(suite: SuiteFile, out: string, comment: string): string[] {
  const files = suiteFiles(suite, out, comment);
  const taken = files.find((f) => existsSync(f.path));
  if (taken) throw new Error(`${taken.path} exists; choose another --out`);
  for (const file of files) writeNew(file.path, file.text);
  if (files.length > 1) console.error(`the suite is larger than a suite file may be (1 MiB): written as ${files.length} suites, ${files.map((f) => `${f.path} (${f.conversations} conversations)`).join(', ')}; list them all under suites: in a suite campaign`);
  return files.map((f) => f.path);
}

export function registerSuiteCommands(program: Command): void {
  program
    .command('pin')
    .description('pin a stored conversation (a campaign\'s or a live session\'s) as a regression: a scripted suite conversation with its turns, contexts and expectations (docs/suites.md)')
    .argument('<run>', 'run id (icabench runs)')
    .argument('<conversation>', 'conversation key in that run')
    .option('--workspace <dir>', 'workspace holding icabench.db', 'workspace')
    .option('--out <file>', 'write a new suite file (default: pinned-<run>-<conversation>.yaml in the suites folder)')
    .option('--suites <dir>', `the suites folder, shared with the bench app's Pin (default bench-configs/suites/, env ${SUITES_DIR_ENV})`)
    .option('--into <file>', 'add the conversation to an existing suite file instead (its comments are kept)')
    .action((runId: string, key: string, options: { workspace: string; out?: string; suites?: string; into?: string }) => {
      const store = openStore(options.workspace)!;
      try {
        const run = store.getRun(runId);
        if (!run) throw new Error(`no run ${runId} in ${options.workspace} (icabench runs lists them)`);
        if (!holdsConversations(run)) throw new Error(`run ${runId} is a ${run.kind} run; only conversations can be pinned`);
        const result = store.getConversation(runId, key);
        if (!result) throw new Error(`run ${runId} has no conversation "${key}"`);
        const conversation = pinConversation(result, { run: runId, runName: run.name });
        if (options.into) {
          writeFileSync(options.into, addToSuiteYaml(options.into, conversation));
          console.log(`added conversation ${conversation.id} to ${options.into}`);
          return;
        }
        const out = options.out ?? join(suitesFolder(options.suites), `${pinnedSuiteName(runId, key)}.yaml`);
        writeNew(out, pinnedSuiteYaml(conversation, pinnedSuiteName(runId, key)));
        console.log(`pinned ${runId}/${key} (${conversation.turns.length} turns) as ${out}`);
      } finally {
        store.close();
      }
    });

  const suite = program.command('suite').description('scripted suites: check a suite file, import transcripts (docs/suites.md)');
  suite
    .command('check')
    .description('validate suite files (errors name the file, the line and the field)')
    .argument('<files...>', 'suite YAML files')
    .action((files: string[]) => {
      for (const file of files) {
        const loaded = loadSuite(file);
        console.log(`${file}: suite "${loaded.suite.suite}", ${loaded.scripts.length} conversations, ${loaded.scripts.reduce((n, s) => n + s.turns.length, 0)} turns`);
      }
    });
  const importer = suite.command('import').description('turn transcripts into a suite file');
  importer
    .command('kvret')
    .description('KVRET in-car dialogues (the JSON of its public release, e.g. data/kvret/kvret_dev_excerpt.json) as a suite')
    .argument('<file>', 'a KVRET JSON file (a full split or an excerpt)')
    .requiredOption('--out <file>', 'the suite file to write')
    .option('--intent <intents>', 'only these KVRET tasks, comma-separated (navigate, weather, schedule)')
    .option('--limit <n>', 'at most this many dialogues')
    .option('--name <name>', 'the suite name', 'kvret')
    .option('--truncate-turns', 'keep the first 50 driver turns of a longer dialogue (a warning names each one cut) instead of refusing the file')
    .action((file: string, options: { out: string; intent?: string; limit?: string; name: string; truncateTurns?: boolean }) => {
      const limit = options.limit === undefined ? undefined : Number(options.limit);
      if (limit !== undefined && !(Number.isInteger(limit) && limit > 0)) throw new Error(`--limit: expected a whole number above 0, got "${options.limit}"`);
      const warn = (line: string) => console.error(`warning: ${line}`);
      const imported = importKvret(file, { name: options.name, limit, truncateTurns: options.truncateTurns, warn, ...(options.intent ? { intents: options.intent.split(',').map((s) => s.trim()) } : {}) });
      const paths = writeImported(imported, options.out, `Imported by \`icabench suite import kvret ${file}\` (docs/suites.md). KVRET: Eric et al. 2017, see data/kvret/SOURCE.md.`);
      console.log(`imported ${imported.conversations.length} KVRET dialogues as ${paths.join(', ')}; ${paths.map(groundsNote).join('; ')}`);
    });
  importer
    .command('transcripts')
    .description('a lab\'s transcripts, CSV or JSON lines, one driver turn a row (columns in docs/suites.md) as a suite')
    .argument('<file>', '.csv or .jsonl')
    .requiredOption('--out <file>', 'the suite file to write')
    .option('--name <name>', 'the suite name', 'transcripts')
    .action((file: string, options: { out: string; name: string }) => {
      const imported = importTranscripts(file, { name: options.name });
      const paths = writeImported(imported, options.out, `Imported by \`icabench suite import transcripts ${file}\` (docs/suites.md).`);
      console.log(`imported ${imported.conversations.length} conversations as ${paths.join(', ')}; ${paths.map(groundsNote).join('; ')}`);
    });
}
