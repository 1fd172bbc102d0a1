/** Exit code of `icabench run` when no conversation reached the head unit (run status unit_unreachable). */
export const UNIT_UNREACHABLE_EXIT_CODE = 4;

/** Shell-quotes an argument only when it needs it (paths with spaces). */
function shellArg(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}

/**
 * The command that continues a stopped run: the same config, workspace and fleet. `fleet` is the fleet URL as it
 * may be printed (its password masked).
 */
export function resumeCommand(configPath: string, runId: string, options: { workspace: string; fleet?: string }): string {
  return ['icabench run', shellArg(configPath), '--workspace', shellArg(options.workspace), ...(options.fleet ? ['--fleet', shellArg(options.fleet)] : []), '--resume', runId].join(' ');
}

/** The line printed when a run stopped by itself (its head unit or its fleet's Redis went away and did not come back). */
export function stoppedLine(runId: string, reason: string, resume: string): string {
  return `run ${runId} stopped: ${reason}. Continue it once that is back with: ${resume}`;
}

/** The line printed when no conversation of a run reached its head unit: the count, the cause, what to do. */
export function unreachableLine(runId: string, what: string, resume: string): string {
  return `run ${runId} unit_unreachable: ${what}. Start or fix the head unit (headUnit in the config), then continue with: ${resume}`;
}
