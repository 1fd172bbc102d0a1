import { readdir } from 'node:fs/promises';
import { runDoctor, type DoctorResult } from '../doctor/checks.ts';
import type { Capabilities } from '../protocol/bridge.ts';
import type { WorkerStatus } from '../fleet/protocol.ts';
import { BUS_OBSERVATION_HINT, MODEL_JUDGE_SNIPPET, TEXT_ONLY_DECIDABLE } from '../kinds/dialogue/text-only.ts';

export type RigArea = 'head_unit' | 'fleet' | 'models' | 'audio' | 'can' | 'disk' | 'system';

/** One line of the rig status screen: what was checked, how it stands, and how to fix it. */
export interface RigCheck {
  area: RigArea;
  title: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  /** present whenever status is not ok */
  fix?: string;
}

export interface ConnectedUnit {
  name: string;
  version: string;
  capabilities: Capabilities;
}

export interface RigStatusSources {
  /** head units dialled in to a bridge this process hosts */
  connectedUnits?: () => ConnectedUnit[];
  /** model references the bench configs use (checked for availability) */
  models?: () => Promise<string[]>;
  /** the fleet's live workers (`icabench serve --fleet`, src/fleet); absent: no fleet lines */
  fleetWorkers?: () => Promise<WorkerStatus[]>;
}

/**
 * The rig status screen: the head unit (from the bridge this server hosts), the SocketCAN
 * interfaces, and every `icabench doctor` check (Node, SQLite, disk, GPU, Ollama and models,
 * speech and CAN tools), so the screen and the CLI report the same problems with the same fixes.
 */
export async function rigStatus(sources: RigStatusSources): Promise<RigCheck[]> {
  const models = sources.models ? await sources.models() : [];
  const [units, fleet, can, doctor] = await Promise.all([headUnitChecks(sources), fleetChecks(sources), canChecks(), runDoctor({ models, allowedHosts: [] })]);
  return [...units, ...fleet, ...can, ...doctor.map(fromDoctor)];
}

function areaOf(result: DoctorResult): RigArea {
  if (result.name === 'disk') return 'disk';
  if (result.name === 'ollama' || result.name === 'gpu' || /^(model|file) /.test(result.name)) return 'models';
  if (/^(speech|audio)/.test(result.name)) return 'audio';
  if (result.name === 'can-utils') return 'can';
  return 'system';
}

function fromDoctor(result: DoctorResult): RigCheck {
  const check: RigCheck = { area: areaOf(result), title: result.name, status: result.status, detail: result.detail };
  if (result.status !== 'ok') check.fix = result.fix ?? 'run `icabench doctor` for details';
  return check;
}

async function headUnitChecks(sources: RigStatusSources): Promise<RigCheck[]> {
  const units = sources.connectedUnits?.() ?? [];
  if (units.length === 0) {
    return [
      {
        area: 'head_unit',
        title: 'Head unit',
        status: 'warn',
        detail: 'no head unit is connected to this bench server; campaigns that use the in-process reference head unit still run',
        fix: 'connect the head unit with its bridge client (docs/bridge-protocol.md), or use a config with headUnit.type: reference (runs in-process)',
      },
    ];
  }
  return units.map((unit) => {
    const detail = `capabilities: ${Object.entries(unit.capabilities)
      .filter(([, on]) => on)
      .map(([name]) => name)
      .join(', ')}`;
    const title = `Head unit ${unit.name} ${unit.version}`;
    if (unit.capabilities.structuredActions) return { area: 'head_unit' as const, title, status: 'ok' as const, detail };
    // text-only: without a model judge the oracle decides few of its turns (src/kinds/dialogue/text-only.ts)
    return {
      area: 'head_unit' as const,
      title,
      status: 'warn' as const,
      detail: `${detail}; no structured actions: with the oracle alone only ${TEXT_ONLY_DECIDABLE} can be decided, every other turn stays undecided`,
      fix: `add a model judge to the config you run against it: ${MODEL_JUDGE_SNIPPET}; ${BUS_OBSERVATION_HINT}`,
    };
  });
}

async function canChecks(): Promise<RigCheck[]> {
  let interfaces: string[] = [];
  try {
    interfaces = (await readdir('/sys/class/net')).filter((name) => /^v?can\d+$/.test(name));
  } catch {
    // not Linux: SocketCAN is unavailable, the serial transport may still be used
  }
  if (interfaces.length > 0) return [{ area: 'can', title: 'CAN transport', status: 'ok', detail: `SocketCAN interfaces: ${interfaces.join(', ')}` }];
  return [
    {
      area: 'can',
      title: 'CAN transport',
      status: 'warn',
      detail: 'no SocketCAN interface (can0/vcan0); vehicle context can only be replayed in-process or over a serial adapter',
      fix: 'sudo modprobe vcan && sudo ip link add dev vcan0 type vcan && sudo ip link set up vcan0 (or plug in the CAN adapter)',
    },
  ];
}

/** One line per fleet worker: its rig, capabilities, what it runs now and its last heartbeat. */
export async function fleetChecks(sources: RigStatusSources, now = Date.now()): Promise<RigCheck[]> {
  if (!sources.fleetWorkers) return [];
  let workers: WorkerStatus[];
  try {
    workers = await sources.fleetWorkers();
  } catch (error) {
    return [{ area: 'fleet', title: 'Fleet', status: 'fail', detail: `cannot read the fleet's workers: ${error instanceof Error ? error.message : String(error)}`, fix: 'check that the fleet Redis runs and the --fleet URL of icabench serve (docs/fleet.md)' }];
  }
  if (workers.length === 0) {
    return [{ area: 'fleet', title: 'Fleet', status: 'warn', detail: 'no worker is connected to the fleet', fix: 'start icabench worker --redis URL --rig NAME on each rig (docs/fleet.md)' }];
  }
  return workers.map((worker): RigCheck => {
    const seconds = Math.max(0, Math.round((now - Date.parse(worker.at)) / 1000));
    const detail =
      `${worker.capabilities.join('+')} over ${worker.transports.join('/')}${worker.voice ? `, voice ${worker.voice}` : ''}; ` +
      `${worker.current.length ? `running ${worker.current.join(', ')}` : 'idle'}; ${worker.done} done; last heartbeat ${seconds} s ago`;
    const title = `Fleet worker ${worker.rig} (${worker.host}, pid ${worker.pid})`;
    if (worker.state === 'ready') return { area: 'fleet', title, status: 'ok', detail };
    if (worker.state === 'stopping') return { area: 'fleet', title, status: 'warn', detail: `stopping; ${detail}`, fix: 'the worker is shutting down; start it again to take jobs' };
    return { area: 'fleet', title, status: 'fail', detail: `not taking jobs: ${worker.reason ?? 'its head unit is unreachable'}; ${detail}`, fix: 'reconnect the rig\'s head unit, then restart the worker' };
  });
}
