import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * The system programs the bench runs, in one place: the voice path, the microphone recorder and the SocketCAN
 * transport run these binaries, and `icabench doctor` checks for exactly these (never a similar name).
 */
export interface SystemProgram {
  binary: string;
  debianPackage: string;
}

export const ESPEAK_NG: SystemProgram = { binary: 'espeak-ng', debianPackage: 'espeak-ng' };
export const POCKETSPHINX: SystemProgram = { binary: 'pocketsphinx_continuous', debianPackage: 'pocketsphinx' };
/** the microphone recorders node-record-lpcm16 can drive, by its recorder name */
export const RECORDERS: Readonly<Record<string, SystemProgram>> = {
  sox: { binary: 'sox', debianPackage: 'sox' },
  rec: { binary: 'rec', debianPackage: 'sox' },
  arecord: { binary: 'arecord', debianPackage: 'alsa-utils' },
};
/** plays and records on PulseAudio/PipeWire devices: the acoustic link (src/voice/acoustic-link.ts) */
export const PACAT: SystemProgram = { binary: 'pacat', debianPackage: 'pulseaudio-utils' };
/** lists PulseAudio/PipeWire devices (icabench voice devices) */
export const PACTL: SystemProgram = { binary: 'pactl', debianPackage: 'pulseaudio-utils' };
/** sends frames on a SocketCAN interface (src/vehicle/transports/socketcan.ts) */
export const CANPLAYER: SystemProgram = { binary: 'canplayer', debianPackage: 'can-utils' };
/** listens on a SocketCAN interface for the observation channel (src/vehicle/observe/sources.ts) */
export const CANDUMP: SystemProgram = { binary: 'candump', debianPackage: 'can-utils' };
export const NVIDIA_SMI: SystemProgram = { binary: 'nvidia-smi', debianPackage: 'nvidia-driver' };

export function missingProgramMessage(program: SystemProgram): string {
  return (
    `${program.binary} was not found on PATH: install the Debian package "${program.debianPackage}" ` +
    `(sudo apt-get install -y ${program.debianPackage}, or run scripts/setup-system.sh)`
  );
}

/** The program's path on PATH, or null; nothing is run. */
export async function findOnPath(binary: string, path = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    if (!dir) continue;
    try {
      await access(join(dir, binary), constants.X_OK);
      return join(dir, binary);
    } catch {
      // not in this directory
    }
  }
  return null;
}
