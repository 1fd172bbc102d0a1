import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readWav } from '../../src/voice/wav.ts';

const CLI = resolve('bin/icabench.js');
const run = (args: string[]) => spawnSync(process.execPath, [CLI, 'voice', ...args], { encoding: 'utf8' });

describe('icabench voice', () => {
  const dir = mkdtempSync(join(tmpdir(), 'icabench-voice-cli-'));

  it('say writes a 16 kHz WAV through cabin acoustics and transcribe reads it back', async () => {
    const wav = join(dir, 'say.wav');
    const said = run(['say', 'Find me a pharmacy in Schwabing.', '--persona', 'elderly', '--snr', '20', '--noise', 'fan', '--out', wav]);
    expect(said.status, said.stderr).toBe(0);
    expect((await readWav(wav)).sampleRate).toBe(16000);
    const heard = run(['transcribe', wav]);
    expect(heard.status, heard.stderr).toBe(0);
    expect(heard.stdout.trim()).toBe(`${wav}\tfind me a pharmacy in schwabing`);
  });

  it('reports bad input plainly with a non-zero exit', () => {
    const badPersona = run(['say', 'hello', '--persona', 'nobody', '--out', join(dir, 'x.wav')]);
    expect(badPersona.status).toBe(2);
    expect(badPersona.stderr).toMatch(/--persona: .*expected one of "neutral"/);
    const garbage = join(dir, 'not-a.wav');
    writeFileSync(garbage, 'garbage');
    const badWav = run(['transcribe', garbage]);
    expect(badWav.status).toBe(2);
    expect(badWav.stderr).toContain(`${garbage}: not a WAV file`);
  });

  it('check confirms the system packages', () => {
    const check = run(['check']);
    expect(check.status, check.stderr).toBe(0);
    expect(check.stdout).toMatch(/espeak-ng, pocketsphinx and its en-us model are installed/);
  });
});
