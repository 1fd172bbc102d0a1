import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CappedProblemPrinter, escapeExcerpt, MAX_PROBLEM_LINES, readFailure } from '../../src/vehicle/logSummary.ts';
import { exactJson } from '../../src/vehicle/exactJson.ts';
import { MAX_LINE_CHARS, streamCandumpLog, type CandumpEntry, type CandumpProblem } from '../../src/vehicle/transports/candump.ts';
import { REPO_ROOT } from '../helpers/repoData.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-can-cli-'));
const VEHICLE_DBC = join(REPO_ROOT, 'hardware/icabench_vehicle.dbc');
const HYUNDAI_DBC = join(REPO_ROOT, 'hardware/dbc/opendbc/hyundai_2015_ccan.dbc');

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/icabench.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function file(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const GOOD = '(1700000000.000000) can0 310#8813030000000000';

describe('log reader summaries and exit codes', () => {
  it('escapes binary and control characters and shortens long lines', () => {
    expect(escapeExcerpt('ok \x00\x1b[31m\\ é €')).toBe('ok \\x00\\x1b[31m\\\\ \\xe9 \\u{20ac}');
    expect(escapeExcerpt('x'.repeat(100), 10)).toBe('xxxxxxxxxx… (90 more chars)');
  });

  it('prints the first problems, then only a count', () => {
    const lines: string[] = [];
    const printer = new CappedProblemPrinter((l) => lines.push(l));
    for (let i = 0; i < MAX_PROBLEM_LINES + 5; i++) printer.report(`problem ${i}`);
    printer.finish('x.log');
    expect(lines.length).toBe(MAX_PROBLEM_LINES + 1);
    expect(lines.at(-1)).toBe(`x.log: 5 more problems not shown (the first ${MAX_PROBLEM_LINES} are above)`);
  });

  it('fails when nothing valid was read, and with strict when anything was refused', () => {
    expect(readFailure({ decoded: 0, rejected: 0, junk: 0 }, false)).toBe('no valid frame was read');
    expect(readFailure({ decoded: 3, rejected: 1, junk: 0 }, false)).toBeUndefined();
    expect(readFailure({ decoded: 3, rejected: 1, junk: 2 }, true)).toBe('--strict: 1 rejected frames and 2 junk lines');
    expect(readFailure({ decoded: 3, rejected: 1, junk: 0 }, false, { rejectedAlwaysFails: true })).toBe('1 frames rejected');
  });

  it('writes bigints as exact JSON numbers', () => {
    expect(exactJson({ a: 6263398323264770332n, b: [1.5, -2n, 'x'], c: undefined, d: null })).toBe('{"a":6263398323264770332,"b":[1.5,-2,"x"],"d":null}');
  });
});

describe('the streaming candump reader', () => {
  async function stream(path: string) {
    const entries: CandumpEntry[] = [];
    const problems: CandumpProblem[] = [];
    await streamCandumpLog(path, { entry: (e) => entries.push(e), problem: (p) => problems.push(p) });
    return { entries, problems };
  }

  it('reads every line across chunk boundaries, CRLF and blank lines included, and a last line without a newline', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => (i % 7 === 3 ? `junk ${i} \x00\x1b` : `(1700000000.${String(i).padStart(6, '0')}) can0 310#${(i % 256).toString(16).padStart(2, '0')}11`));
    const path = file('many.log', lines.join('\r\n') + '\n\n' + GOOD);
    const { entries, problems } = await stream(path);
    expect(entries.length + problems.length).toBe(5001);
    expect(problems.map((p) => p.line)).toEqual(lines.flatMap((_, i) => (i % 7 === 3 ? [i + 1] : [])));
    expect(problems[0]).toEqual({ line: 4, text: 'junk 3 \\x00\\x1b', reason: 'expected "(seconds.micros) iface ID#HEXDATA"' });
    expect(entries[0].frame).toEqual({ t: 1700000000, id: 0x310, extended: false, data: Uint8Array.from([0x00, 0x11]) });
    expect(entries.at(-2)!.frame.data).toEqual(Uint8Array.from([4999 % 256, 0x11]));
    expect(entries.at(-1)!.line).toBe(5002);
  });

  it('a line longer than MAX_LINE_CHARS is one junk line, buffered only up to the limit', async () => {
    const long = 'A'.repeat(MAX_LINE_CHARS * 40);
    const { entries, problems } = await stream(file('long.log', `${GOOD}\n${long}\n${GOOD}`));
    expect(entries.map((e) => e.line)).toEqual([1, 3]);
    expect(problems).toEqual([{ line: 2, text: `${'A'.repeat(80)}… (${long.length - 80} more chars)`, reason: `line longer than ${MAX_LINE_CHARS} characters` }]);
  });

  it('stops on an endless line instead of reading forever (/dev/zero)', async () => {
    await expect(stream('/dev/zero')).rejects.toThrow(/^\/dev\/zero:1: a line of more than 1048576 characters without a newline: not a candump log \(stopped reading\)$/);
  });

  it('names the file when it cannot be read', async () => {
    await expect(stream(join(dir, 'missing.log'))).rejects.toThrow(/cannot read candump log .*missing\.log: ENOENT/);
  });
});

describe('icabench can decode', { timeout: 120_000 }, () => {
  it('junk only: exit 1, one summary line, binary never echoed raw, junk messages capped', () => {
    const junk = Buffer.concat(Array.from({ length: 500 }, (_, i) => Buffer.from([0x00, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe, 0x07, 0x30 + (i % 10), 0x0a])));
    const result = cli('can', 'decode', VEHICLE_DBC, file('junk.log', junk));
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines.filter((l) => l.includes('skipped junk line')).length).toBe(MAX_PROBLEM_LINES);
    expect(result.stderr).toContain('junk.log: 480 more problems not shown');
    // the last line is the one-line summary, with the reason for the exit code
    expect(lines.at(-1)).toMatch(/\/junk\.log: 0 frames decoded, 0 rejected, 500 junk lines, 0 values out of range; failed: no valid frame was read$/);
    expect(result.stderr).toContain('\\x00\\x1b[2J\\u{fffd}');
    // no control byte (other than newline) reaches the terminal
    expect(/[\x00-\x09\x0b-\x1f\x7f]/.test(result.stderr)).toBe(false);
  });

  it('a log where 1,801 of 2,000 lines are junk fails (more than --max-bad, default 0.5, of the lines are not frames), with the count; --max-bad raises the bar', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => (i < 199 ? GOOD : `not a frame ${i}`));
    const log = file('mostly-junk.log', lines.join('\n'));
    const result = cli('can', 'decode', VEHICLE_DBC, log);
    expect(result.status).toBe(1);
    expect(result.stderr.trimEnd().split('\n').at(-1)).toMatch(
      /mostly-junk\.log: 199 frames decoded, 0 rejected, 1801 junk lines, 0 values out of range; failed: 1801 of 2000 lines are not frames \(90\.0%\), above --max-bad 0\.5$/,
    );
    expect(cli('can', 'decode', VEHICLE_DBC, log, '--max-bad', '0.95').status).toBe(0);
    const wrong = cli('can', 'decode', VEHICLE_DBC, log, '--max-bad', '50%');
    expect(wrong.status).not.toBe(0);
    expect(wrong.stderr).toContain('--max-bad: expected a share from 0 to 1 (0.2 = 20%), got "50%"');
  });

  it('a good log with a junk line passes; --strict fails it', () => {
    const log = file('mostly-good.log', [GOOD, 'junk', GOOD, '(1700000000.030000) can0 123#00'].join('\n'));
    const lenient = cli('can', 'decode', VEHICLE_DBC, log);
    expect(lenient.status).toBe(0);
    expect(lenient.stderr).toContain('mostly-good.log: 2 frames decoded, 1 rejected, 1 junk lines');
    const strict = cli('can', 'decode', VEHICLE_DBC, log, '--strict');
    expect(strict.status).toBe(1);
    expect(strict.stderr).toContain('mostly-good.log: 2 frames decoded, 1 rejected, 1 junk lines, 0 values out of range; failed: --strict: 1 rejected frames and 1 junk lines');
    expect(strict.stdout).toBe(lenient.stdout);
    const clean = cli('can', 'decode', VEHICLE_DBC, file('clean.log', GOOD + '\n'), '--strict');
    expect(clean.status).toBe(0);
  });

  it('an empty DBC is an error naming the file; a binary DBC is quoted escaped; an empty log fails', () => {
    const result = cli('can', 'decode', file('empty.dbc', 'VERSION ""\n'), file('one.log', GOOD + '\n'));
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/empty\.dbc:2: expected at least one message/);
    const binary = cli('can', 'decode', file('binary.dbc', Buffer.from([0x1b, 0x5b, 0x32, 0x4a, 0x00])), file('one.log', GOOD + '\n'));
    expect(binary.status).toBe(2);
    expect(binary.stderr).toContain("binary.dbc:1: expected a DBC token (keyword, name, number, string or one of : ; | , ( ) [ ] @), found '\\x1b'");
    expect(/[\x00-\x09\x0b-\x1f]/.test(binary.stderr)).toBe(false);
    const empty = cli('can', 'decode', VEHICLE_DBC, file('empty.log', ''));
    expect(empty.status).toBe(1);
    expect(empty.stderr).toMatch(/empty\.log: 0 frames decoded, 0 rejected, 0 junk lines, 0 values out of range; failed: no valid frame was read\n$/);
  });

  it('prints a 64-bit signal exactly in --json (ACU12.CR_Acu_SN = 6263398323264770332)', () => {
    const data = Buffer.alloc(8);
    data.writeBigUInt64LE(6263398323264770332n);
    const log = file('acu.log', `(1700000000.000000) can0 5A1#${data.toString('hex').toUpperCase()}\n`);
    const result = cli('can', 'decode', HYUNDAI_DBC, log, '--json');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe('{"t":1700000000,"id":1441,"message":"ACU12","signals":{"CR_Acu_SN":6263398323264770332},"labels":{}}\n');
    const text = cli('can', 'decode', HYUNDAI_DBC, log);
    expect(text.stdout).toBe('1700000000.000000 ACU12 CR_Acu_SN=6263398323264770332\n');
  });
});

describe('icabench can replay', { timeout: 120_000 }, () => {
  it('a log without a frame sends nothing and exits 1; --strict fails on a junk line', () => {
    const endless = cli('can', 'replay', '/dev/zero');
    expect(endless.status).toBe(2);
    expect(endless.stderr).toContain('/dev/zero:1: a line of more than 1048576 characters without a newline: not a candump log');
    const empty = cli('can', 'replay', file('nothing.log', 'junk\nmore junk\n'));
    expect(empty.status).toBe(1);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain('nothing.log: 0 frames sent, 0 rejected, 2 junk lines');
    const log = file('one-junk.log', [GOOD, 'junk'].join('\n'));
    expect(cli('can', 'replay', log).status).toBe(0);
    const strict = cli('can', 'replay', log, '--strict');
    expect(strict.status).toBe(1);
    expect(strict.stdout).toBe(GOOD + '\n');
  });
});
