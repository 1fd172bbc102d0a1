/**
 * Observation-channel benchmark (issue #32): a 1 kHz SLCAN frame stream through a socat pseudo-terminal pair into
 * the bench's observation channel, listening as it does in a campaign (turn windows opened one after another).
 * A quarter of the frames are the head unit's commands (climate set point, media source: decoded into actions),
 * the rest the car's own traffic (looked up, not decoded). Reports frames sent / read / lost, the delay from
 * writing a frame to the channel reading it, and the channel's CPU time per frame. Needs socat. Usage:
 *   npm run bench:observe -- [--seconds 30] [--hz 1000]
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import type { CanFrame, TimedFrame } from '../src/vehicle/frames.ts';
import { loadActionMapping } from '../src/vehicle/observe/action-mapping.ts';
import { ObservationChannel } from '../src/vehicle/observe/channel.ts';
import { ObserveConfigSchema } from '../src/vehicle/observe/config.ts';
import { openFrameSource, type FrameSource } from '../src/vehicle/observe/sources.ts';
import { SlcanSink } from '../src/vehicle/transports/slcan.ts';

const options = new Command().option('--seconds <n>', 'duration', '30').option('--hz <n>', 'frames per second', '1000').parse(process.argv).opts<{ seconds: string; hz: string }>();
const seconds = Number(options.seconds);
const hz = Number(options.hz);

const dir = mkdtempSync(join(tmpdir(), 'icabench-bench-observe-'));
const [unitEnd, benchEnd] = [join(dir, 'unit'), join(dir, 'bench')];
const socat = spawn('socat', [`pty,raw,echo=0,link=${unitEnd}`, `pty,raw,echo=0,link=${benchEnd}`], { stdio: 'ignore' });
socat.once('error', () => {
  console.error('socat is not installed (Debian package socat; scripts/setup-system.sh)');
  process.exit(1);
});
for (let i = 0; i < 100 && !(existsSync(unitEnd) && existsSync(benchEnd)); i++) await new Promise((r) => setTimeout(r, 50));

const mapping = loadActionMapping('icabench_vehicle-actions');
// the car's own traffic carries a sequence number: id 0x123, 4 bytes
const sentAt = new Float64Array(seconds * hz + 1000);
let read = 0;
let maxDelay = 0;
const delays: number[] = [];
let channelCpuUs = 0;
const slcan = openFrameSource(ObserveConfigSchema.parse({ transport: `slcan:${benchEnd}` }).transport);
const measured: FrameSource = {
  describe: slcan.describe,
  start: (onFrame, onProblem) =>
    slcan.start((frame: CanFrame) => {
      read++;
      if (frame.id === 0x123) {
        const seq = new DataView(frame.data.buffer, frame.data.byteOffset).getUint32(0);
        const delay = performance.now() - sentAt[seq];
        maxDelay = Math.max(maxDelay, delay);
        if (seq % 10 === 0) delays.push(delay);
      }
      const before = process.cpuUsage();
      onFrame(frame);
      const used = process.cpuUsage(before);
      channelCpuUs += used.user + used.system;
    }, onProblem),
  close: () => slcan.close(),
};
const channel = await ObservationChannel.open(ObserveConfigSchema.parse({ transport: `slcan:${benchEnd}`, windowMs: 1000 }), { source: measured });
const sink = await SlcanSink.open(unitEnd);

let actions = 0;
let dropped = 0;
let turns = 0;
const watching = (async () => {
  for (let t = 0; t < seconds; t++) {
    const observation = await channel.watchTurn().close();
    actions += observation.actions.length;
    dropped += observation.actionsDropped;
    turns++;
  }
})();

const total = seconds * hz;
let sent = 0;
const start = performance.now();
while (sent < total) {
  const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * hz));
  const frames: TimedFrame[] = [];
  for (; sent < due; sent++) {
    if (sent % 4 === 0) {
      frames.push(sent % 8 === 0 ? mapping.encode('climate_setpoint', 16 + (sent % 28) / 2, undefined, 0)! : mapping.encode('media_source', ['radio', 'music', 'podcast'][sent % 3], undefined, 0)!);
    } else {
      const data = new Uint8Array(4);
      new DataView(data.buffer).setUint32(0, sent);
      sentAt[sent] = performance.now();
      frames.push({ t: 0, id: 0x123, extended: false, data });
    }
  }
  if (frames.length > 0) await sink.send(frames);
  await new Promise((r) => setTimeout(r, 5));
}
await watching;
await new Promise((r) => setTimeout(r, 200));
await sink.close();
await channel.close();
socat.kill();

delays.sort((a, b) => a - b);
const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? NaN;
console.log(
  JSON.stringify(
    {
      seconds,
      hz,
      framesSent: total,
      framesRead: read,
      lost: total - read,
      // a turn keeps MAX_ACTIONS_PER_TURN actions and counts the rest
      actionsKept: actions,
      actionsCounted: dropped,
      turnWindows: turns,
      delayMs: { p50: +pct(0.5).toFixed(2), p99: +pct(0.99).toFixed(2), max: +maxDelay.toFixed(2) },
      channelCpuUsPerFrame: +(channelCpuUs / read).toFixed(2),
      unreadable: channel.unreadable,
    },
    null,
    2,
  ),
);
