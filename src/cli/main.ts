import { Command } from 'commander';

/** Each area registers its own subcommands; main only assembles them. */
export async function main(argv: string[]): Promise<void> {
  const program = new Command();
  program
    .name('icabench')
    .description('Test bench for in-car conversational assistants (offline, multi-turn, two-tier judge).')
    .showHelpAfterError();
  // area registrations (one line each)
  await program.parseAsync(argv);
}
