import { Command } from 'commander';
import { icabenchVersion } from '../domain/package-files.ts';

type Register = (program: Command) => void;

/**
 * Each area registers its own subcommands; main loads only the area of the command asked for (none for
 * `--version`, all of them for help or an unknown command), so a command does not pay for every other area's
 * modules at start-up.
 */
const AREAS: ReadonlyArray<{ commands: readonly string[]; load: () => Promise<Register> }> = [
  { commands: ['run'], load: async () => (await import('./commands/run.ts')).registerRunCommands },
  { commands: ['runs', 'compare', 'report', 'export'], load: async () => (await import('./commands/results.ts')).registerResultCommands },
  { commands: ['headunit'], load: async () => (await import('./commands/headunit.ts')).registerHeadunitCommands },
  { commands: ['conformance'], load: async () => (await import('./commands/conformance.ts')).registerConformanceCommands },
  { commands: ['can'], load: async () => (await import('./commands/can.ts')).registerCanCommands },
  { commands: ['serve'], load: async () => (await import('./commands/serve.ts')).registerServeCommands },
  { commands: ['app'], load: async () => (await import('./commands/app.ts')).registerAppCommands },
  { commands: ['doctor'], load: async () => (await import('./commands/doctor.ts')).registerDoctorCommands },
  { commands: ['judge-bench', 'judge-bench-dataset', 'judge-bench-agreement'], load: async () => (await import('./commands/judge-bench.ts')).registerJudgeBenchCommands },
  { commands: ['voice'], load: async () => (await import('./commands/voice.ts')).registerVoiceCommands },
  { commands: ['manual'], load: async () => (await import('./commands/manual.ts')).registerManualCommands },
  { commands: ['session'], load: async () => (await import('./commands/session.ts')).registerSessionCommands },
  { commands: ['pin', 'suite'], load: async () => (await import('./commands/suite.ts')).registerSuiteCommands },
  { commands: ['worker'], load: async () => (await import('./commands/worker.ts')).registerWorkerCommands },
];

const VERSION_FLAGS = ['-V', '--version'];

/** The areas `asked` (the first argument) needs: its command's, none for the version, every area otherwise (help, an unknown command). */
function areasFor(asked: string | undefined): ReadonlyArray<(typeof AREAS)[number]> {
  const areas = AREAS.filter((area) => area.commands.includes(asked ?? ''));
  if (areas.length > 0) return areas;
  return VERSION_FLAGS.includes(asked ?? '') ? [] : AREAS;
}

/** The icabench program with the commands of the area `asked` names (every area when it names none): the CLI and the README's docs test read the same one. */
export async function buildProgram(asked?: string): Promise<Command> {
  const program = new Command();
  program
    .name('icabench')
    .description('Test bench for in-car conversational assistants (offline, multi-turn, two-tier judge).')
    .version(icabenchVersion(), '-V, --version', 'print the icabench version')
    .showHelpAfterError();
  for (const area of areasFor(asked)) (await area.load())(program);
  return program;
}

/** A reader that stopped reading (`icabench runs | head`): the output it wanted is written; quit quietly. */
const isClosedPipe = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code === 'EPIPE';

/** Assembles the asked area's commands and reports errors plainly. */
export async function main(argv: string[]): Promise<void> {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error) => {
      if (isClosedPipe(error)) process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
  const program = await buildProgram(argv[2]);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    if (isClosedPipe(error)) return;
    // configuration and input errors already name the file, line and field: print them without a stack
    console.error(`icabench: ${error instanceof Error ? error.message : String(error)}`);
    if (process.env.ICABENCH_DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = 2;
  }
}
