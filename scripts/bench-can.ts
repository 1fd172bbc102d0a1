/**
 * Real-time scheduler benchmark: N messages at a given rate each (default 50 × 100 Hz) for a duration
 * (default 600 s), every frame encoded with the DBC codec and handed to a counting sink.
 * Reports frames expected/sent/dropped and lateness percentiles. Usage:
 *   npm run bench:can -- [--seconds 600] [--messages 50] [--hz 100]
 */
import { Command } from 'commander';
import { cpus } from 'node:os';
import { parseDbc } from '../src/vehicle/dbc/parser.ts';
import { DbcCodec } from '../src/vehicle/dbc/codec.ts';
import { FrameScheduler, type PeriodicMessage } from '../src/vehicle/scheduler.ts';
import type { FrameSink } from '../src/vehicle/transports/sink.ts';
import type { TimedFrame } from '../src/vehicle/frames.ts';

const options = new Command()
  .option('--seconds <n>', 'duration', '600')
  .option('--messages <n>', 'number of periodic messages', '50')
  .option('--hz <n>', 'rate per message', '100')
  .parse(process.argv)
  .opts<{ seconds: string; messages: string; hz: string }>();

const seconds = Number(options.seconds);
const count = Number(options.messages);
const hz = Number(options.hz);

// a synthetic DBC: each message has a counter, a Motorola speed-like value and an Intel signed value
const dbcText = Array.from({ length: count }, (_, i) =>
  [
    `BO_ ${0x100 + i} BENCH_${i}: 8 BENCH`,
    ` SG_ COUNTER : 0|8@1+ (1,0) [0|255] "" X`,
    ` SG_ VALUE : 15|16@0+ (0.01,0) [0|655.35] "" X`,
    ` SG_ DELTA : 24|12@1- (0.5,0) [-1024|1023.5] "" X`,
  ].join('\n'),
).join('\n');
const codec = new DbcCodec(parseDbc(dbcText, 'bench.dbc'));
let counter = 0;
const messages: PeriodicMessage[] = codec.db.messages.map((message) => ({
  id: message.id,
  extended: false,
  cycleMs: 1000 / hz,
  payload: (t) => codec.encode(message.name, { COUNTER: counter++ & 0xff, VALUE: (t * 10) % 600, DELTA: Math.sin(t) * 500 }),
}));

let lastT = -Infinity;
let outOfOrder = 0;
const countingSink: FrameSink = {
  describe: 'counting sink',
  async send(frames: readonly TimedFrame[]) {
    for (const frame of frames) {
      if (frame.t < lastT) outOfOrder++;
      lastT = frame.t;
    }
  },
  async close() {},
};

const scheduler = new FrameScheduler(messages);
console.log(`bench:can  ${count} messages × ${hz} Hz for ${seconds} s on ${cpus().length} cores, Node ${process.version}`);
const stats = await scheduler.runRealtime(countingSink, { durationSec: seconds });
const result = { messages: count, hz, seconds, ...stats, outOfOrder };
console.log(JSON.stringify(result, null, 2));
const pass = stats.framesDropped === 0 && outOfOrder === 0 && stats.latenessMs.p99 < 5;
console.log(pass ? 'PASS: no dropped frame, p99 lateness < 5 ms' : 'FAIL: target is no dropped frame and p99 lateness < 5 ms');
process.exitCode = pass ? 0 : 1;
