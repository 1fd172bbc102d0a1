import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import type { TimedFrame } from '../frames.ts';
import { formatCandumpLine } from './candump.ts';
import type { FrameSink } from './sink.ts';
import { CANPLAYER } from '../../system/programs.ts';

/** Linux ARPHRD_CAN: the link type /sys/class/net/<if>/type reports for CAN and vcan interfaces */
const ARPHRD_CAN = '280';

/** Why `iface` cannot carry CAN here (no such interface: this kernel may have no CAN support; not a CAN link), or null. */
export function canInterfaceProblem(iface: string, sysfs = '/sys/class/net'): Error | null {
  const typeFile = `${sysfs}/${iface}/type`;
  if (!existsSync(typeFile)) {
    return new Error(
      `cannot open SocketCAN interface "${iface}": no such network interface. This kernel may have no CAN support; ` +
        `on a rig, bring the interface up (ip link set ${iface} up type can bitrate 500000) or create a virtual one ` +
        `(modprobe vcan && ip link add dev ${iface} type vcan && ip link set ${iface} up).`,
    );
  }
  const linkType = readFileSync(typeFile, 'utf8').trim();
  if (linkType !== ARPHRD_CAN) return new Error(`cannot open SocketCAN interface "${iface}": it is not a CAN interface (link type ${linkType}, CAN is ${ARPHRD_CAN})`);
  return null;
}

/**
 * Sends frames on a Linux SocketCAN interface through can-utils' canplayer (Node has no CAN sockets):
 * frames are written to canplayer's stdin as log lines and sent at once (-t), the pacing is ours.
 * Fails with a clear message when the interface is missing or not a CAN interface.
 */
export class SocketCanSink implements FrameSink {
  readonly describe: string;
  private exitError: Error | undefined;

  private constructor(private readonly child: ChildProcess, private readonly iface: string) {
    this.describe = `SocketCAN ${iface}`;
    child.on('exit', (code, signal) => {
      if (code !== 0 && code !== null) this.exitError = new Error(`${this.describe}: canplayer exited with code ${code}`);
      else if (signal && signal !== 'SIGTERM') this.exitError = new Error(`${this.describe}: canplayer killed by ${signal}`);
    });
  }

  static open(iface: string, options: { sysfs?: string; canplayer?: string } = {}): Promise<SocketCanSink> {
    const problem = canInterfaceProblem(iface, options.sysfs);
    if (problem) return Promise.reject(problem);
    return new Promise((resolve, reject) => {
      const child = spawn(options.canplayer ?? CANPLAYER.binary, ['-t'], { stdio: ['pipe', 'ignore', 'pipe'] });
      child.once('error', (error) =>
        reject(new Error(`cannot start ${CANPLAYER.binary} for SocketCAN ${iface} (install Debian package ${CANPLAYER.debianPackage}): ${error.message}`)),
      );
      child.once('spawn', () => resolve(new SocketCanSink(child, iface)));
    });
  }

  send(frames: readonly TimedFrame[]): Promise<void> {
    if (this.exitError) return Promise.reject(this.exitError);
    const text = frames.map((frame) => formatCandumpLine(frame, this.iface) + '\n').join('');
    return new Promise((resolve, reject) => {
      this.child.stdin!.write(text, (error) => (error ? reject(new Error(`${this.describe}: ${error.message}`)) : resolve()));
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null) return resolve();
      this.child.once('exit', () => resolve());
      this.child.stdin!.end();
    });
  }
}
