import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A private PulseAudio daemon with two null sinks, as the acoustic-link tests' sound card: `bench_out`
 * (the bench's artificial mouth; the unit's microphone records its monitor) and `unit_out` (the unit's
 * loudspeaker; the bench records its monitor). Each call gets its own runtime dir, so test files do not
 * share a daemon. Needs the Debian packages pulseaudio and pulseaudio-utils (scripts/setup-system.sh).
 */
export interface VirtualAudio {
  env: NodeJS.ProcessEnv;
  bench: { output: string; input: string };
  unit: { output: string; input: string };
  stop(): void;
}

/** The sinks' volume in scripts/virtual-audio.sh (a test reads it there, so the two cannot drift apart). */
export const VIRTUAL_SINK_VOLUME = '70%';

export function startVirtualAudio(): VirtualAudio {
  if (spawnSync('pulseaudio', ['--version']).error) throw new Error('pulseaudio is not installed: run `bash scripts/setup-system.sh` as root (Debian packages pulseaudio, pulseaudio-utils)');
  const runtime = mkdtempSync(join(tmpdir(), 'icabench-pulse-'));
  const env = { ...process.env, XDG_RUNTIME_DIR: runtime, PULSE_RUNTIME_PATH: join(runtime, 'pulse'), HOME: runtime };
  execFileSync(
    'pulseaudio',
    ['--daemonize=yes', '--exit-idle-time=-1', '--disallow-exit', '-n', '--load=module-native-protocol-unix', '--load=module-null-sink sink_name=bench_out', '--load=module-null-sink sink_name=unit_out', '--log-target=stderr', '--log-level=error'],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  // the levels of the shipped virtual rig (scripts/virtual-audio.sh): at 100 % synthetic speech clips on the monitors
  for (const sink of ['bench_out', 'unit_out']) execFileSync('pactl', ['set-sink-volume', sink, VIRTUAL_SINK_VOLUME], { env });
  return {
    env,
    bench: { output: 'bench_out', input: 'unit_out.monitor' },
    unit: { output: 'unit_out', input: 'bench_out.monitor' },
    stop: () => {
      spawnSync('pulseaudio', ['--kill'], { env });
      rmSync(runtime, { recursive: true, force: true });
    },
  };
}
