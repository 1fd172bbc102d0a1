import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SerialPort } from 'serialport';
import { afterAll, describe, expect, it } from 'vitest';
import { framesForInterval, scenarioEpoch } from '../../src/vehicle/feed.ts';
import { sameFrame, type TimedFrame } from '../../src/vehicle/frames.ts';
import { loadMapping } from '../../src/vehicle/mapping.ts';
import { replayFrames } from '../../src/vehicle/replay.ts';
import { loadScenario } from '../../src/vehicle/scenario.ts';
import { FrameScheduler } from '../../src/vehicle/scheduler.ts';
import { CandumpFileSink, formatCandumpLine, readCandumpLog } from '../../src/vehicle/transports/candump.ts';
import { SlcanSink, slcanCommand } from '../../src/vehicle/transports/slcan.ts';
import { SocketCanSink } from '../../src/vehicle/transports/socketcan.ts';
import type { FrameSink } from '../../src/vehicle/transports/sink.ts';

const REPO = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'icabench-can-'));

/** A binary the test needs from a Debian package; missing means the test fails and says what to install. */
function requireBinary(name: string, debianPackage: string): void {
  const found = spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
  if (!found) throw new Error(`${name} is not installed: this test needs Debian package ${debianPackage} (apt-get install -y ${debianPackage})`);
}

function cli(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [join(REPO, 'bin/icabench.js'), ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

const urban = loadScenario('urban');
const mapping = loadMapping('icabench_vehicle');

describe('candump log files', () => {
  it('round-trips the urban scenario: same frames, same timestamps, same text', async () => {
    const frames = framesForInterval(urban, mapping, 0, 60, scenarioEpoch(urban));
    const path = join(dir, 'urban-api.log');
    const sink = new CandumpFileSink(path);
    await sink.send(frames);
    await sink.close();
    const { entries, problems } = await readCandumpLog(path);
    expect(problems).toEqual([]);
    expect(entries.length).toBe(frames.length);
    entries.forEach((entry, i) => expect(sameFrame({ ...entry.frame, t: Number(entry.frame.t.toFixed(6)) }, { ...frames[i], t: Number(frames[i].t.toFixed(6)) })).toBe(true));
    expect(entries[0].iface).toBe('can0');
    const text = readFileSync(path, 'utf8');
    // urban starts in P: gear 0, parking brake engaged (byte 5, bit 40)
    expect(text.split('\n')[0]).toBe('(1781252100.000000) can0 310#000000431A010000');

    const copy = join(dir, 'urban-api-replayed.log');
    const replaySink = new CandumpFileSink(copy);
    const result = await replayFrames(entries.map((e) => e.frame), replaySink, { pace: false });
    await replaySink.close();
    expect(result).toEqual({ sent: frames.length, failed: 0, errors: [] });
    expect(readFileSync(copy, 'utf8')).toBe(text);
  });

  it('formats and parses standard, extended and CAN FD frames', async () => {
    const frames: TimedFrame[] = [
      { t: 1700000000.123456, id: 0x123, extended: false, data: Uint8Array.from([0xde, 0xad, 0xbe, 0xef]) },
      { t: 1700000000.5, id: 0x1abcdef0, extended: true, data: new Uint8Array() },
      { t: 1700000001, id: 0x7ff, extended: false, data: Uint8Array.from({ length: 12 }, (_, i) => i) },
    ];
    const lines = frames.map((f) => formatCandumpLine(f, 'vcan0'));
    expect(lines).toEqual([
      '(1700000000.123456) vcan0 123#DEADBEEF',
      '(1700000000.500000) vcan0 1ABCDEF0#',
      '(1700000001.000000) vcan0 7FF##0000102030405060708090A0B',
    ]);
    const path = join(dir, 'formats.log');
    writeFileSync(path, lines.join('\n'));
    const { entries, problems } = await readCandumpLog(path);
    expect(problems).toEqual([]);
    expect(entries.map((e) => e.frame)).toEqual(frames);
  });

  it('reports corrupt lines with their line number and keeps the rest', async () => {
    const text = [
      '(1700000000.000000) can0 310#0011',
      'garbage',
      '(1700000000.010000) can0 310#001',
      '(1700000000.020000) can0 8000#00',
      '(1700000000.030000) can0 FFF#00',
      '(1700000000.040000) can0 123#00112233445566778899',
      '',
      '(1700000000.050000) can0 311#22',
    ].join('\n');
    const path = join(dir, 'corrupt-lines.log');
    writeFileSync(path, text);
    const { entries, problems } = await readCandumpLog(path);
    expect(entries.map((e) => e.line)).toEqual([1, 8]);
    expect(problems.map((p) => [p.line, p.reason])).toEqual([
      [2, 'expected "(seconds.micros) iface ID#HEXDATA"'],
      [3, 'data "001" is not whole bytes of hex'],
      [4, 'id "8000" must have 3 (standard) or 8 (extended) hex digits'],
      [5, 'id 0xFFF is beyond the 11-bit range'],
      [6, '10 data bytes is more than a classic CAN frame holds'],
    ]);
  });
});

describe('can CLI', () => {
  it('records 60 s of the urban scenario that can-utils log2asc accepts, and replays it identically', async () => {
    requireBinary('log2asc', 'can-utils');
    const record = cli('can', 'record', 'urban', '--seconds', '60', '--out', 'urban.log');
    expect(record.stderr).toContain('urban.log: 4080 frames');
    expect(record.status).toBe(0);
    const log = join(dir, 'urban.log');
    const { entries } = await readCandumpLog(log);
    expect(entries.length).toBe(4080);

    const asc = join(dir, 'urban.asc');
    const converted = spawnSync('log2asc', ['-I', log, '-O', asc, 'can0'], { encoding: 'utf8' });
    expect(converted.status, converted.stderr).toBe(0);
    // log2asc writes one "Rx" line per frame with the time relative to the first frame, the id and the bytes
    const rx = readFileSync(asc, 'utf8').split('\n').filter((l) => / Rx /.test(l));
    expect(rx.length).toBe(entries.length);
    rx.forEach((line, i) => {
      const [time, channel, id, direction, kind, length, ...bytes] = line.trim().split(/\s+/);
      const frame = entries[i].frame;
      expect([Number(time), channel, id, direction, kind, Number(length)]).toEqual([
        Number((frame.t - entries[0].frame.t).toFixed(6)),
        '1',
        frame.id.toString(16).toUpperCase(),
        'Rx',
        'd',
        frame.data.length,
      ]);
      expect(bytes.join('')).toBe(Buffer.from(frame.data).toString('hex').toUpperCase());
    });

    const replay = cli('can', 'replay', 'urban.log', '--transport', 'candump:replayed.log');
    expect(replay.status, replay.stderr).toBe(0);
    expect(replay.stderr).toContain('urban.log -> candump log replayed.log: 4080 frames sent, 0 rejected, 0 junk lines');
    expect(readFileSync(join(dir, 'replayed.log'), 'utf8')).toBe(readFileSync(log, 'utf8'));
  });

  it('decodes a log as one JSON object per frame and reports bad lines and frames', () => {
    writeFileSync(
      join(dir, 'mixed.log'),
      ['(1700000000.000000) can0 310#8813030000000000', 'not a frame', '(1700000000.010000) can0 123#00', '(1700000000.020000) can0 310#FFFF030000000000'].join('\n'),
    );
    const result = cli('can', 'decode', join(REPO, 'hardware/icabench_vehicle.dbc'), 'mixed.log', '--json');
    expect(result.status).toBe(0);
    const objects = result.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(objects[0]).toEqual({ t: 1700000000, id: 0x310, message: 'VEHICLE_MOTION', signals: { VehicleSpeed: 50, Gear: 3, Heading: 0, ParkingBrake: 0 }, labels: { Gear: 'D', ParkingBrake: 'RELEASED' } });
    expect(objects[1]).toMatchObject({ t: 1700000000.01, id: 0x123, error: 'unknown_id' });
    expect(objects[2]).toMatchObject({ message: 'VEHICLE_MOTION', signals: { VehicleSpeed: 655.35 } });
    expect(result.stderr).toContain('mixed.log:2: skipped junk line');
    expect(result.stderr).toContain('mixed.log:4: out of range: VEHICLE_MOTION.VehicleSpeed = 655.35, declared [0|300]');
    expect(result.stderr).toContain('mixed.log: 2 frames decoded, 1 rejected, 1 junk lines, 1 values out of range');
  });

  it('replay carries on past corrupt lines', () => {
    writeFileSync(join(dir, 'corrupt.log'), ['(1.000000) can0 310#01', '(2.0) can0 310#02', '(3.000000) can0 310#03'].join('\n') + '\n');
    const result = cli('can', 'replay', 'corrupt.log');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('(1.000000) can0 310#01\n(3.000000) can0 310#03\n');
    expect(result.stderr).toContain('corrupt.log:2: skipped junk line');
  });

  it('replay over SocketCAN fails with a clear message when the interface cannot be opened', () => {
    writeFileSync(join(dir, 'one.log'), '(1.000000) can0 310#01\n');
    const result = cli('can', 'replay', 'one.log', '--transport', 'socketcan:icabenchcan9');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('cannot open SocketCAN interface "icabenchcan9": no such network interface');
  });
});

describe('SocketCAN sink', () => {
  it('refuses a missing interface and a non-CAN interface with a clear message', async () => {
    await expect(SocketCanSink.open('icabenchcan9')).rejects.toThrow(/cannot open SocketCAN interface "icabenchcan9": no such network interface.*modprobe vcan/);
    const sysfs = join(dir, 'sys-class-net');
    spawnSync('mkdir', ['-p', join(sysfs, 'eth7')]);
    writeFileSync(join(sysfs, 'eth7/type'), '1\n');
    await expect(SocketCanSink.open('eth7', { sysfs })).rejects.toThrow(/"eth7": it is not a CAN interface \(link type 1, CAN is 280\)/);
  });
});

describe('SLCAN over a pseudo-terminal', () => {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) child.kill();
  });

  it('formats SLCAN transmit commands', () => {
    expect(slcanCommand({ t: 0, id: 0x310, extended: false, data: Uint8Array.from([0x88, 0x13]) })).toBe('t31028813\r');
    expect(slcanCommand({ t: 0, id: 0x1abcdef, extended: true, data: new Uint8Array() })).toBe('T01ABCDEF0\r');
    expect(() => slcanCommand({ t: 0, id: 1, extended: false, data: new Uint8Array(12) })).toThrow(/classic CAN only/);
  });

  it('opens the channel, sends frames and closes it, byte for byte', async () => {
    requireBinary('socat', 'socat');
    const a = join(dir, 'pty-a');
    const b = join(dir, 'pty-b');
    const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
    children.push(socat);
    for (let i = 0; i < 100 && !(existsSync(a) && existsSync(b)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(a) && existsSync(b)).toBe(true);

    const adapter = new SerialPort({ path: b, baudRate: 115_200 });
    let received = '';
    adapter.on('data', (chunk: Buffer) => (received += chunk.toString('ascii')));
    await new Promise<void>((r, reject) => adapter.once('open', () => r()).once('error', reject));

    const frames = framesForInterval(urban, mapping, 30, 30.1);
    const sink = await SlcanSink.open(a, { bitrate: 250_000 });
    await sink.send(frames);
    await sink.close();
    const expected = 'C\rS5\rO\r' + frames.map(slcanCommand).join('') + 'C\r';
    for (let i = 0; i < 100 && received.length < expected.length; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise<void>((r) => adapter.close(() => r()));
    expect(received).toBe(expected);
    expect(frames.length).toBeGreaterThan(5);
  });

  it('fails clearly when the serial port cannot be opened or the bit rate is not SLCAN', async () => {
    await expect(SlcanSink.open(join(dir, 'no-such-tty'))).rejects.toThrow(/cannot open serial port .*no-such-tty for SLCAN/);
    await expect(SlcanSink.open('/dev/null', { bitrate: 300_000 })).rejects.toThrow(/SLCAN bit rate 300000 is not one of/);
  });
});

describe('frame scheduler', () => {
  it('places messages at phase + k * cycle in virtual time', () => {
    const scheduler = new FrameScheduler([
      { id: 1, extended: false, cycleMs: 10, payload: () => new Uint8Array([1]) },
      { id: 2, extended: false, cycleMs: 25, phaseMs: 5, payload: (t) => new Uint8Array([Math.round(t * 1000)]) },
    ]);
    const frames = scheduler.framesBetween(0.02, 0.06, 100);
    expect(frames.map((f) => [Number((f.t - 100).toFixed(6)), f.id])).toEqual([
      [0.02, 1],
      [0.03, 1],
      [0.03, 2],
      [0.04, 1],
      [0.05, 1],
      [0.055, 2],
    ]);
    expect(frames[2].data).toEqual(Uint8Array.from([30]));
    expect(() => new FrameScheduler([{ id: 1, extended: false, cycleMs: 0, payload: () => new Uint8Array() }])).toThrow(/cycle time must be a positive number/);
  });

  it('sends every due frame in real time, in order, and counts what a failing sink drops', async () => {
    const messages = Array.from({ length: 5 }, (_, i) => ({ id: 0x100 + i, extended: false, cycleMs: 10, payload: () => new Uint8Array(8) }));
    const received: TimedFrame[] = [];
    const sink: FrameSink = { describe: 'memory', send: async (f) => void received.push(...f), close: async () => {} };
    const stats = await new FrameScheduler(messages).runRealtime(sink, { durationSec: 0.3 });
    expect(stats.framesExpected).toBe(150);
    expect(stats.framesSent).toBe(150);
    expect(stats.framesDropped).toBe(0);
    expect(received.map((f) => [Number(f.t.toFixed(6)), f.id])).toEqual(new FrameScheduler(messages).framesBetween(0, 0.3).map((f) => [Number(f.t.toFixed(6)), f.id]));

    let calls = 0;
    const flaky: FrameSink = {
      describe: 'flaky',
      send: async () => {
        if (calls++ === 0) throw new Error('bus off');
      },
      close: async () => {},
    };
    const flakyStats = await new FrameScheduler(messages).runRealtime(flaky, { durationSec: 0.1 });
    expect(flakyStats.sendErrors).toBeGreaterThan(0);
    expect(flakyStats.framesDropped).toBe(flakyStats.sendErrors);
    expect(flakyStats.firstError).toBe('bus off');
  });
});
