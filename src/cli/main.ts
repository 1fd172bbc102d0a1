import { Command } from 'commander';
import { registerHeadunitCommands } from './commands/headunit.ts';
import { registerResultCommands } from './commands/results.ts';
import { registerRunCommands } from './commands/run.ts';
import { registerCanCommands } from './commands/can.ts';
import { registerServeCommands } from './commands/serve.ts';
import { registerDoctorCommands } from './commands/doctor.ts';
import { registerJudgeBenchCommands } from './commands/judge-bench.ts';
import { registerVoiceCommands } from './commands/voice.ts';
import { registerManualCommands } from './commands/manual.ts';
import { registerWorkerCommands } from './commands/worker.ts';

/** Each area registers its own subcommands; main only assembles them and reports errors plainly. */
export async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program
    .name('icabench')
    .description('Test bench for in-car conversational assistants (offline, multi-turn, two-tier judge).')
    .showHelpAfterError();
  // area registrations (one line each)
  registerRunCommands(program);
  registerResultCommands(program);
  registerHeadunitCommands(program);
  registerCanCommands(program);
  registerServeCommands(program);
  registerDoctorCommands(program);
  registerJudgeBenchCommands(program);
  registerVoiceCommands(program);
  registerManualCommands(program);
  registerWorkerCommands(program);
  try {
    await program.parseAsync(argv);
  } catch (error) {
    // configuration and input errors already name the file, line and field: print them without a stack
    console.error(`icabench: ${error instanceof Error ? error.message : String(error)}`);
    if (process.env.ICABENCH_DEBUG && error instanceof Error) console.error(error.stack);
    process.exitCode = 2;
  }
}
