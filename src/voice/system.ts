import { spawn } from 'node:child_process';
import { missingProgramMessage, type SystemProgram } from '../system/programs.ts';
import { VoiceError } from './types.ts';

export interface ProgramOutput {
  stdout: Buffer;
  stderr: string;
}

/** Runs a system program to completion; a missing binary becomes a VoiceError naming the package to install. */
export function runProgram(program: SystemProgram, args: string[], input?: Buffer | string): Promise<ProgramOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(program.binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') reject(new VoiceError(missingProgramMessage(program)));
      else reject(new VoiceError(`${program.binary} could not be started: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      const errText = Buffer.concat(stderr).toString('utf8');
      if (code === 0) resolve({ stdout: Buffer.concat(stdout), stderr: errText });
      else
        reject(
          new VoiceError(
            `${program.binary} ${args.slice(0, 4).join(' ')}… failed (${signal ?? `exit ${code}`}): ${errText.trim().split('\n').slice(-3).join(' | ')}`,
          ),
        );
    });
    // a program that exits before reading its input raises EPIPE here; the close handler reports it
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}
