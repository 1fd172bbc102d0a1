import type { Socket } from 'socket.io';
import type { Evidence } from './checks.ts';

/** A message the unit sent, with the ms since the probe started. */
export interface Received {
  event: string;
  payload: unknown;
  atMs: number;
  index: number;
}

/**
 * The conformance kit's view of one unit's socket: everything the unit sends is logged in order (socket.onAny),
 * everything the kit sends goes through `send`, and each check reads its evidence from the log. The bench's own
 * connection keeps its listeners on the same socket, so the unit meets the bench as it really is.
 */
export class Probe {
  readonly received: Received[] = [];
  private readonly waiters = new Set<() => void>();
  private readonly origin = performance.now();

  constructor(readonly socket: Socket) {
    socket.onAny((event: string, payload: unknown) => {
      this.received.push({ event, payload, atMs: this.now(), index: this.received.length });
      for (const wake of [...this.waiters]) wake();
    });
    socket.on('disconnect', () => {
      for (const wake of [...this.waiters]) wake();
    });
  }

  now(): number {
    return Math.round((performance.now() - this.origin) * 10) / 10;
  }

  send(event: string, payload: unknown, evidence?: Evidence[]): number {
    const at = this.now();
    evidence?.push({ direction: 'sent', event, atMs: at, payload: forEvidence(payload) });
    this.socket.emit(event, payload);
    return at;
  }

  /** The first message from `fromIndex` on that `match`es, waiting up to `timeoutMs`; null when none came. */
  async waitFor(match: (message: Received) => boolean, fromIndex: number, timeoutMs: number): Promise<Received | null> {
    const find = () => this.received.slice(fromIndex).find(match) ?? null;
    const found = find();
    if (found || timeoutMs <= 0) return found;
    return new Promise((resolve) => {
      const done = (value: Received | null) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(value);
      };
      const wake = () => {
        const hit = find();
        if (hit) done(hit);
      };
      const timer = setTimeout(() => done(find()), timeoutMs);
      this.waiters.add(wake);
    });
  }

  /** Waits `ms` (to see whether anything more arrives: duplicates, late replies). */
  settle(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** A payload as the report shows it: binary parts as their size, the token redacted, long strings cut. */
export function forEvidence(value: unknown, depth = 0): unknown {
  if (value instanceof ArrayBuffer) return `<${value.byteLength} bytes>`;
  if (ArrayBuffer.isView(value)) return `<${value.byteLength} bytes>`;
  if (typeof value === 'string') return value.length > 500 ? `${value.slice(0, 500)}… (${value.length} characters)` : value;
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 6) return '…';
  if (Array.isArray(value)) return value.length > 12 ? [...value.slice(0, 12).map((v) => forEvidence(v, depth + 1)), `… ${value.length - 12} more`] : value.map((v) => forEvidence(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'token' && typeof v === 'string' ? '(redacted)' : forEvidence(v, depth + 1)]));
}
