import { execFile } from 'node:child_process';
import { readdir, statfs } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Capabilities } from '../protocol/bridge.ts';

const run = promisify(execFile);

export type RigArea = 'head_unit' | 'models' | 'audio' | 'can' | 'disk';

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
  workspace: string;
  /** head units dialled in to a bridge this process hosts; null when it hosts none */
  connectedUnits?: () => ConnectedUnit[];
  /** further checks (model providers, …) contributed by other areas */
  extraChecks?: () => Promise<RigCheck[]>;
}

const MIN_FREE_BYTES = 1024 ** 3;

export async function rigStatus(sources: RigStatusSources): Promise<RigCheck[]> {
  const groups = await Promise.all([
    headUnitChecks(sources),
    audioChecks(),
    canChecks(),
    diskCheck(sources.workspace),
    sources.extraChecks ? sources.extraChecks() : Promise.resolve([]),
  ]);
  return groups.flat();
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
        fix: 'connect the head unit with its bridge client (docs/bridge-protocol.md), or use a config whose sut is the reference head unit',
      },
    ];
  }
  return units.map((unit) => ({
    area: 'head_unit' as const,
    title: `Head unit ${unit.name} ${unit.version}`,
    status: 'ok' as const,
    detail: `capabilities: ${Object.entries(unit.capabilities)
      .filter(([, on]) => on)
      .map(([name]) => name)
      .join(', ')}`,
  }));
}

async function onPath(command: string): Promise<string | null> {
  try {
    const { stdout } = await run('sh', ['-c', `command -v ${command}`]);
    return stdout.trim() || null;
  } catch {
    return null;
  }
}

async function audioChecks(): Promise<RigCheck[]> {
  const [espeak, sphinx] = await Promise.all([onPath('espeak-ng'), onPath('pocketsphinx')]);
  return [
    espeak
      ? { area: 'audio', title: 'Speech synthesis (espeak-ng)', status: 'ok', detail: espeak }
      : { area: 'audio', title: 'Speech synthesis (espeak-ng)', status: 'warn', detail: 'espeak-ng is not installed; spoken turns are unavailable', fix: 'apt-get install -y espeak-ng' },
    sphinx
      ? { area: 'audio', title: 'Speech recognition (pocketsphinx)', status: 'ok', detail: sphinx }
      : { area: 'audio', title: 'Speech recognition (pocketsphinx)', status: 'warn', detail: 'pocketsphinx is not installed; spoken replies cannot be transcribed', fix: 'apt-get install -y pocketsphinx pocketsphinx-en-us' },
  ];
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

async function diskCheck(workspace: string): Promise<RigCheck[]> {
  try {
    const stats = await statfs(workspace);
    const free = stats.bavail * stats.bsize;
    const gib = (free / 1024 ** 3).toFixed(1);
    if (free < MIN_FREE_BYTES) {
      return [{ area: 'disk', title: 'Disk', status: 'fail', detail: `${gib} GiB free under ${workspace}`, fix: 'free at least 1 GiB (old runs can be deleted from the workspace)' }];
    }
    return [{ area: 'disk', title: 'Disk', status: 'ok', detail: `${gib} GiB free under ${workspace}` }];
  } catch (error) {
    return [{ area: 'disk', title: 'Disk', status: 'fail', detail: `cannot read ${workspace}: ${(error as Error).message}`, fix: `create the workspace directory ${workspace}` }];
  }
}
