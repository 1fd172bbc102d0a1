import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { DbcCodec } from '../../src/vehicle/dbc/codec.ts';
import type { CanFrame } from '../../src/vehicle/frames.ts';
import { loadActionMapping } from '../../src/vehicle/observe/action-mapping.ts';
import { MAX_ACTIONS_PER_TURN, ObservationChannel } from '../../src/vehicle/observe/channel.ts';
import { ObserveConfigSchema } from '../../src/vehicle/observe/config.ts';
import { openFrameSource, slcanFrame, type FrameSource } from '../../src/vehicle/observe/sources.ts';
import { CandumpFileSink, formatCandumpLine } from '../../src/vehicle/transports/candump.ts';
import { ReferenceBus } from '../../src/headunit/reference/bus-actions.ts';

const dir = mkdtempSync(join(tmpdir(), 'icabench-observe-'));
const mapping = loadActionMapping('icabench_vehicle-actions');
const children: ChildProcess[] = [];
afterAll(() => children.forEach((c) => c.kill()));
afterEach(() => vi.restoreAllMocks());

/** A source the test pushes frames into; the clock is the test's. */
function manualSource(): FrameSource & { push(frame: CanFrame): void } {
  let deliver: (frame: CanFrame) => void = () => undefined;
  return {
    describe: 'test source',
    start: async (onFrame) => void (deliver = onFrame),
    push: (frame) => deliver(frame),
    close: async () => undefined,
  };
}

const carFrame: CanFrame = { id: 0x310, extended: false, data: new Uint8Array(8) };
const climate = (c: number) => mapping.encode('climate_setpoint', c)!;

describe('observed actions from frames', () => {
  it('reads command messages frame by frame, state messages on change, each with the decoded frame', async () => {
    const source = manualSource();
    let now = 0;
    const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: 'candump:/dev/null', windowMs: 0 }), { source, now: () => now });
    const watch = channel.watchTurn();
    now = 12;
    source.push(climate(21));
    source.push(climate(21));
    source.push(carFrame);
    source.push(mapping.encode('media_volume', 10)!);
    source.push(mapping.encode('media_volume', 10)!);
    source.push(mapping.encode('media_source', 'video')!);
    const seen = await watch.close();
    expect(seen.actions.map((a) => [a.kind, a.value])).toEqual([
      ['climate_setpoint', 21],
      ['climate_setpoint', 21],
      ['media_volume', 10],
      ['media_source', 'video'],
    ]);
    expect(seen.actions[0]).toMatchObject({ atMs: 12, frame: { id: 0x500, message: 'HU_CLIMATE_REQUEST', data: '2A', signals: { Setpoint: 21 } } });
    expect(seen.actions[3].frame.signals).toEqual({ Source: 'VIDEO' });
    expect(seen.framesSeen).toBe(5);
    expect(seen.carries).toEqual(expect.arrayContaining(['climate_setpoint', 'media_source', 'vehicle_control:lane_keeping_assist']));
    // outside a turn's window frames only update the state
    source.push(climate(22));
    const next = channel.watchTurn();
    source.push(mapping.encode('media_volume', 10)!);
    expect((await next.close()).actions).toEqual([]);
  });

  it('keeps at most MAX_ACTIONS_PER_TURN actions a turn and counts the rest', async () => {
    const source = manualSource();
    const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: 'candump:/dev/null', windowMs: 0 }), { source, now: () => 0 });
    const watch = channel.watchTurn();
    for (let i = 0; i < MAX_ACTIONS_PER_TURN + 7; i++) source.push(climate(20));
    const seen = await watch.close();
    expect(seen.actions).toHaveLength(MAX_ACTIONS_PER_TURN);
    expect(seen.actionsDropped).toBe(7);
  });

  it('adds no per-frame work that grows with the run: one decode per unit frame, none for the car, whatever the number of turns', async () => {
    const decode = vi.spyOn(DbcCodec.prototype, 'decode');
    const runTurns = async (turns: number) => {
      decode.mockClear();
      const source = manualSource();
      const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: 'candump:/dev/null', windowMs: 0 }), { source, now: () => 0 });
      let kept = 0;
      for (let t = 0; t < turns; t++) {
        const watch = channel.watchTurn();
        for (let i = 0; i < 150; i++) source.push(carFrame);
        for (let i = 0; i < 50; i++) source.push(climate(16 + (i % 20)));
        kept += (await watch.close()).actions.length;
      }
      // the channel's state: the last value of each mapping entry, nothing per frame or per turn
      expect((channel as unknown as { last: unknown[] }).last).toHaveLength(mapping.size);
      return { decodesPerUnitFrame: decode.mock.calls.length / (turns * 50), keptPerTurn: kept / turns };
    };
    const small = await runTurns(10);
    const large = await runTurns(40);
    expect(small).toEqual({ decodesPerUnitFrame: 1, keptPerTurn: MAX_ACTIONS_PER_TURN });
    expect(large).toEqual(small);
  });
});

describe('where the channel listens', () => {
  it('parses SLCAN receive lines and ignores acknowledgements and adapter commands', () => {
    expect(slcanFrame('t5001' + '2A')).toEqual({ id: 0x500, extended: false, data: Uint8Array.from([0x2a]) });
    expect(slcanFrame('T00000500' + '1' + '2A' + '1234')).toEqual({ id: 0x500, extended: true, data: Uint8Array.from([0x2a]) });
    expect(slcanFrame('\x07')).toBeNull();
    expect(slcanFrame('S6')).toBeNull();
    expect(slcanFrame('t50029')).toMatch(/SLCAN frame of 2 bytes has 0/);
    expect(slcanFrame('hello')).toMatch(/not an SLCAN frame/);
  });

  it('follows a candump log as a logger appends to it (what was there before is history)', async () => {
    const log = join(dir, 'follow.log');
    writeFileSync(log, formatCandumpLine({ ...climate(30), t: 1 }) + '\n');
    const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `candump:${log}`, windowMs: 500 }));
    const watch = channel.watchTurn();
    appendFileSync(log, formatCandumpLine({ ...climate(21), t: 2 }) + '\n' + 'junk line\n');
    const seen = await watch.close();
    await channel.close();
    expect(seen.actions.map((a) => [a.kind, a.value])[0]).toEqual(['climate_setpoint', 21]);
    expect(channel.unreadable).toBeGreaterThan(0);
    expect(channel.describe()).toMatchObject({ transport: `candump log ${log} (followed)`, mapping: 'icabench_vehicle-actions', dbc: 'icabench_vehicle.dbc' });
  });

  it('reads a candump -L stream on a pseudo-terminal', async () => {
    const [a, b] = [join(dir, 'dump-a'), join(dir, 'dump-b')];
    const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
    children.push(socat);
    for (let i = 0; i < 100 && !(existsSync(a) && existsSync(b)); i++) await new Promise((r) => setTimeout(r, 50));
    const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `candump:${b}`, windowMs: 1500 }));
    const { SerialPort } = await import('serialport');
    const writer = new SerialPort({ path: a, baudRate: 115_200 });
    await new Promise<void>((r, reject) => writer.once('open', () => r()).once('error', reject));
    const watch = channel.watchTurn();
    writer.write(formatCandumpLine({ ...mapping.encode('vehicle_control', false, 'lane_keeping_assist')!, t: 5 }) + '\n');
    const seen = await watch.close();
    await new Promise<void>((r) => writer.close(() => r()));
    await channel.close();
    expect(seen.actions.map((a) => [a.kind, a.target, a.value])).toEqual([['vehicle_control', 'lane_keeping_assist', false]]);
  }, 20_000);

  it('fails loudly where it cannot listen: no SocketCAN in this kernel, no such tty, the bridge', async () => {
    const socketcan = openFrameSource(ObserveConfigSchema.parse({ transport: 'socketcan:icabench0' }).transport);
    await expect(socketcan.start(() => undefined, () => undefined)).rejects.toThrow(/cannot open SocketCAN interface "icabench0": no such network interface\. This kernel may have no CAN support/);
    expect(() => openFrameSource(ObserveConfigSchema.parse({ transport: `candump:${join(dir, 'missing.log')}` }).transport)).toThrow(/cannot observe the bus on .*missing\.log/);
    await expect(openFrameSource(ObserveConfigSchema.parse({ transport: `slcan:${join(dir, 'no-tty')}` }).transport).start(() => undefined, () => undefined)).rejects.toThrow(/cannot open .*no-tty to observe the bus \(SLCAN\)/);
    expect(ObserveConfigSchema.safeParse({ transport: 'bridge' }).error?.issues[0].message).toMatch(/the bridge carries nothing from the unit's bus/);
  });

  it('names the file and field of a mapping error', () => {
    const bad = join(dir, 'bad-actions.yaml');
    writeFileSync(bad, `name: bad\ndbc: ${join(process.cwd(), 'hardware/icabench_vehicle.dbc')}\nactions:\n  - { kind: climate_setpoint, message: HU_NOPE, signal: Setpoint }\n`);
    expect(() => loadActionMapping(bad)).toThrow(/bad-actions\.yaml:4: actions\.0\.message: HU_NOPE is not a message of/);
    writeFileSync(bad, `name: bad\ndbc: x.dbc\nactions:\n  - { kind: media_source, message: HU_MEDIA_REQUEST, signal: Source }\n`);
    expect(() => loadActionMapping(bad)).toThrow(/media_source needs values/);
  });
});

describe('a recorded trace replayed as the observation source', () => {
  const seenOf = (actions: Array<{ kind: string; value: unknown; target?: string; frame: { data: string } }>) => actions.map((a) => [a.kind, a.target, a.value, a.frame.data]);

  it("replays the reference unit's recorded frames to the same observed actions as the live stream", async () => {
    const trace = join(dir, 'reference-unit.log');
    writeFileSync(trace, '');
    const unit = new ReferenceBus(new CandumpFileSink(trace), mapping, { profiles: ['bus_wrong_value'], rate: 1, seed: 1 });
    const live = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `candump:${trace}`, windowMs: 400 }));
    const liveWatch = live.watchTurn();
    // one turn's commands: a wrong set point (°F), a media source, lane keeping off; the file is the recording
    await unit.emit([{ type: 'climate', setpointC: 21, zone: 'all' }, { type: 'media', action: 'play', source: 'radio' }, { type: 'vehicle_control', control: 'lane_keeping_assist', value: false }], 'c1', 0);
    await unit.close();
    const liveSeen = await liveWatch.close();
    await live.close();
    expect(liveSeen.actions.length).toBe(3);

    const replay = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `replay:${trace}`, windowMs: 400 }));
    expect(replay.describe().transport).toBe(`replay of ${trace}`);
    const replaySeen = await replay.watchTurn().close();
    await replay.close();
    expect(seenOf(replaySeen.actions)).toEqual(seenOf(liveSeen.actions));
    expect(replaySeen.actions[0]).toMatchObject({ kind: 'climate_setpoint', value: 70 }) // 21 °C sent in °F (69.8, on the signal's 0.5 grid);
  }, 20_000);

  it('plays relative timestamps from the first frame at the first turn, frames later in the trace later', async () => {
    const trace = join(dir, 'relative.log');
    const line = (t: number, c: number) => formatCandumpLine({ ...climate(c), t }, 'can1');
    writeFileSync(trace, [line(0, 20), line(0.02, 21), 'junk line', line(30, 22)].join('\n') + '\n');
    const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `replay:${trace}`, windowMs: 200 }));
    const first = await channel.watchTurn().close();
    await channel.close();
    // the frame 30 s into the trace belongs to a turn 30 s after the first: not to this one
    expect(first.actions.map((a) => a.value)).toEqual([20, 21]);
    expect(channel.unreadable).toBe(1);
  }, 20_000);

  it('names the trace that cannot be replayed', async () => {
    const empty = join(dir, 'empty.log');
    writeFileSync(empty, 'not a frame\n');
    await expect(openFrameSource(ObserveConfigSchema.parse({ transport: `replay:${empty}` }).transport).start(() => undefined, () => undefined)).rejects.toThrow(/cannot replay the recorded trace .*empty\.log: it holds no candump frame/);
    await expect(openFrameSource(ObserveConfigSchema.parse({ transport: `replay:${join(dir, 'missing.log')}` }).transport).start(() => undefined, () => undefined)).rejects.toThrow(/cannot replay the recorded trace .*missing\.log/);
  });
});
