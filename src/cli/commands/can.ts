import { once } from 'node:events';
import type { Command } from 'commander';
import { BRIDGE_TOKEN_ENV } from '../../protocol/bridge.ts';
import { startBridgeServer } from '../../bridge/server.ts';
import { DbcCodec } from '../../vehicle/dbc/codec.ts';
import { loadDbc } from '../../vehicle/dbc/parser.ts';
import { scenarioEpoch, scenarioScheduler } from '../../vehicle/feed.ts';
import { loadMapping } from '../../vehicle/mapping.ts';
import { loadScenario } from '../../vehicle/scenario.ts';
import { replayFrames } from '../../vehicle/replay.ts';
import { CandumpFileSink, readCandumpLog, streamCandumpLog, type CandumpProblem } from '../../vehicle/transports/candump.ts';
import { exactJson } from '../../vehicle/exactJson.ts';
import { CappedProblemPrinter, formatReadSummary, readFailure, type LogReadCounts } from '../../vehicle/logSummary.ts';
import { openFrameSink, parseTransportSpec, type FrameSink } from '../../vehicle/transports/index.ts';

function positiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}: expected a positive number, got "${value}"`);
    return n;
  };
}

function shareOption(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new Error(`${name}: expected a share from 0 to 1 (0.2 = 20%), got "${value}"`);
    return n;
  };
}

/** A junk line of a log, through the capped printer (the excerpt is escaped by the reader). */
function reportJunk(file: string, problem: CandumpProblem, printer: CappedProblemPrinter): void {
  printer.report(`${file}:${problem.line}: skipped junk line (${problem.reason}): ${problem.text}`);
}

/** Writes the buffered output lines to stdout and empties the buffer; waits while stdout is full. */
async function writeLines(out: string[]): Promise<void> {
  if (out.length === 0) return;
  const ok = process.stdout.write(out.join('\n') + '\n');
  out.length = 0;
  // once() rejects on 'error' (a closed pipe), so a reader that went away does not leave us waiting
  if (!ok) await once(process.stdout, 'drain');
}

/** Prints the summary line and sets exit code 1 when the read failed (nothing valid, or --strict and anything refused). */
function finishRead(
  file: string,
  counts: LogReadCounts,
  strict: boolean,
  printer: CappedProblemPrinter,
  options: { verb?: string; extra?: string[]; rejectedAlwaysFails?: boolean; maxBadShare?: number } = {},
): void {
  printer.finish(file);
  const failure = readFailure(counts, strict, options);
  console.error(formatReadSummary(file, counts, options) + (failure ? `; failed: ${failure}` : ''));
  if (failure) process.exitCode = 1;
}

export function registerCanCommands(program: Command): void {
  const can = program.command('can').description('Vehicle context over CAN: record drive scenarios, decode and replay candump logs.');
  registerCanRecord(can);
  registerCanDecode(can);
  registerCanReplay(can);
}

function registerCanRecord(can: Command): void {
  can
    .command('record')
    .description('Write the frames of a drive scenario as a candump log (virtual time: instant, reproducible).')
    .argument('<scenario>', 'scenario name (bench-configs/scenarios) or YAML path')
    .requiredOption('--seconds <n>', 'scenario seconds to record', positiveNumber('--seconds'))
    .requiredOption('--out <file>', 'candump log to write')
    .option('--mapping <name|path>', 'DBC mapping (hardware/mappings) the frames follow', 'icabench_vehicle')
    .option('--from <s>', 'scenario second to start at', '0')
    .option('--iface <name>', 'interface name written in the log', 'can0')
    .action(async (scenarioName: string, options: { seconds: number; out: string; mapping: string; from: string; iface: string }) => {
      const scenario = loadScenario(scenarioName);
      const mapping = loadMapping(options.mapping);
      const from = Number(options.from);
      if (!Number.isFinite(from) || from < 0) throw new Error(`--from: expected seconds >= 0, got "${options.from}"`);
      const frames = scenarioScheduler(scenario, mapping).framesBetween(from, from + options.seconds, scenarioEpoch(scenario));
      const sink = new CandumpFileSink(options.out, options.iface);
      await sink.send(frames);
      await sink.close();
      console.error(`${options.out}: ${frames.length} frames, scenario ${scenario.name} t=${from}..${from + options.seconds} s on ${mapping.dbcName}`);
    });
}

function registerCanDecode(can: Command): void {
  can
    .command('decode')
    .description(
      'Decode a candump log with a DBC: one line per frame (JSON with --json). Ends with a summary line on stderr; exits 1 when no valid frame was read, when more than --max-bad of the lines are not frames, or with --strict when any frame was rejected or any line was junk.',
    )
    .argument('<dbc>', 'DBC file')
    .argument('<log>', 'candump log')
    .option('--json', 'print one JSON object per frame: {t, id, message, signals, labels}; integers wider than 53 bits are written with every digit')
    .option('--strict', 'exit 1 when any frame is rejected or any line is junk')
    .option('--max-bad <share>', 'exit 1 when more than this share (0–1) of the lines are not frames', shareOption('--max-bad'), 0.5)
    .action(async (dbcPath: string, logPath: string, options: { json?: boolean; strict?: boolean; maxBad: number }) => {
      const codec = new DbcCodec(loadDbc(dbcPath));
      const printer = new CappedProblemPrinter();
      const counts: LogReadCounts = { decoded: 0, rejected: 0, junk: 0 };
      let outOfRange = 0;
      const out: string[] = [];
      // the log is streamed: memory stays bounded for any file, and output waits for a slow reader (backpressure)
      try {
        await streamCandumpLog(logPath, {
          problem: (p) => {
            counts.junk++;
            reportJunk(logPath, p, printer);
          },
          entry: ({ frame, line }) => {
            const result = codec.decode(frame);
            if (!result.ok) {
              counts.rejected++;
              printer.report(`${logPath}:${line}: ${result.problem}: ${result.detail}`);
              if (options.json) out.push(JSON.stringify({ t: frame.t, id: frame.id, error: result.problem, detail: result.detail }));
              return;
            }
            counts.decoded++;
            const { message, signals, labels } = result.frame;
            for (const o of result.frame.outOfRange) {
              outOfRange++;
              printer.report(`${logPath}:${line}: out of range: ${message.name}.${o.signal} = ${o.value}, declared [${o.minimum}|${o.maximum}]`);
            }
            if (options.json) out.push(exactJson({ t: frame.t, id: frame.id, message: message.name, signals, labels }));
            else out.push(`${frame.t.toFixed(6)} ${message.name} ${Object.entries(signals).map(([k, v]) => `${k}=${labels[k] ?? v}`).join(' ')}`);
          },
          afterChunk: () => writeLines(out),
        });
        await writeLines(out);
      } catch (error) {
        // the reader of stdout went away (`| head`): stop quietly, like other Unix filters
        if ((error as NodeJS.ErrnoException).code === 'EPIPE') return;
        throw error;
      }
      finishRead(logPath, counts, options.strict === true, printer, { extra: [`${outOfRange} values out of range`], maxBadShare: options.maxBad });
    });
}

function registerCanReplay(can: Command): void {
  can
    .command('replay')
    .description(
      'Send a candump log over a transport, at the recorded pace (candump output is written at once). Ends with a summary line on stderr; exits 1 when no frame was sent, a frame failed, or with --strict any line was junk.',
    )
    .argument('<log>', 'candump log')
    .option('--transport <spec>', 'candump[:FILE] (stdout without FILE), slcan:/dev/ttyX, socketcan:IFACE or bridge', 'candump')
    .option('--bitrate <n>', 'SLCAN bus bit rate', '500000')
    .option('--dbc-name <name>', 'bridge: the DBC name the head unit decodes with', 'icabench_vehicle')
    .option('--port <n>', 'bridge: port the bench listens on for the head unit (0: any free port)', '0')
    .option('--wait <s>', 'bridge: seconds to wait for a head unit to dial in', '60')
    .option('--no-pace', 'send as fast as the transport takes frames')
    .option('--strict', 'exit 1 when any line of the log is junk (a refused frame always fails)')
    .action(async (logPath: string, options: { transport: string; bitrate: string; dbcName: string; port: string; wait: string; pace: boolean; strict?: boolean }) => {
      const spec = parseTransportSpec(options.transport);
      if (!spec) throw new Error(`--transport: expected candump, candump:FILE, slcan:/dev/ttyX, socketcan:IFACE or bridge, got "${options.transport}"`);
      const { entries, problems } = await readCandumpLog(logPath);
      const printer = new CappedProblemPrinter();
      for (const problem of problems) reportJunk(logPath, problem, printer);
      if (entries.length === 0) {
        finishRead(logPath, { decoded: 0, rejected: 0, junk: problems.length }, options.strict === true, printer, { verb: 'sent' });
        return;
      }
      const frames = entries.map((e) => e.frame);
      let closeBridge: (() => Promise<void>) | undefined;
      let sink: FrameSink;
      if (spec.kind === 'bridge') {
        const token = process.env[BRIDGE_TOKEN_ENV];
        if (!token) throw new Error(`the bridge transport needs the shared token in ${BRIDGE_TOKEN_ENV}`);
        const server = await startBridgeServer({ token, port: Number(options.port) });
        closeBridge = () => server.close();
        console.error(`waiting up to ${options.wait} s for a head unit at ${server.url}`);
        const unit = await server.waitForHeadUnit(Number(options.wait) * 1000);
        sink = await openFrameSink(spec, { bridge: { dbc: options.dbcName, emit: (payload) => unit.sendVehicleContext(null, payload) } });
      } else {
        sink = await openFrameSink(spec, { bitrate: Number(options.bitrate), iface: entries[0]?.iface });
      }
      try {
        const result = await replayFrames(frames, sink, { pace: spec.kind !== 'candump' && options.pace });
        for (const error of result.errors) printer.report(`${sink.describe}: ${error}`);
        // a frame the transport refused is a failure even without --strict: the replay did not happen as recorded
        finishRead(`${logPath} -> ${sink.describe}`, { decoded: result.sent, rejected: result.failed, junk: problems.length }, options.strict === true, printer, {
          verb: 'sent',
          rejectedAlwaysFails: true,
        });
      } finally {
        await sink.close();
        await closeBridge?.();
      }
    });
}

