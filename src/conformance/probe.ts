import type { Socket } from 'socket.io';
import { EVENTS } from '../protocol/bridge.ts';
import type { Evidence } from './checks.ts';

/** A message the unit sent, with the ms since the probe started. */
export interface Received {
  event: string;
  payload: unknown;
  atMs: number;
  index: number;
}

/** A bridge_error the bench itself sent the unit: its guard refused one of the unit's messages (too large, too deep, off-schema). */
export interface Refusal {
  atMs: number;
  sessionId: string | undefined;
  code: string;
  /** the bench's message, `<event>: <why>` */
  message: string;
}

/** How the socket ended: the ms since the probe started and socket.io's reason. */
export interface LinkDrop {
  atMs: number;
  reason: string;
}

/** Why a request got no usable answer, other than silence: the bench refused the answer, or the link dropped. */
export type AnswerProblem = { kind: 'refused'; atMs: number; text: string } | { kind: 'dropped'; atMs: number; text: string };

/**
 * The conformance kit's view of one unit's socket: everything the unit sends is logged in order (socket.onAny),
 * everything the kit sends goes through `send`, and each check reads its evidence from the log. The bench's own
 * connection keeps its listeners on the same socket, so the unit meets the bench as it really is.
 */
export class Probe {
  readonly received: Received[] = [];
  /** what the bench's guard refused of this unit's messages, in order */
  readonly refusals: Refusal[] = [];
  dropped: LinkDrop | null = null;
  private sending = false;
  private readonly waiters = new Set<() => void>();
  private readonly origin = performance.now();

  constructor(readonly socket: Socket) {
    socket.onAny((event: string, payload: unknown) => {
      this.received.push({ event, payload, atMs: this.now(), index: this.received.length });
      for (const wake of [...this.waiters]) wake();
    });
    // the bench's own bridge_error to the unit (not one the kit sends) is its guard refusing a message
    socket.onAnyOutgoing((event: string, payload: unknown) => {
      if (this.sending || event !== EVENTS.error) return;
      const sessionId = field(payload, 'sessionId');
      this.refusals.push({ atMs: this.now(), sessionId: typeof sessionId === 'string' ? sessionId : undefined, code: String(field(payload, 'code')), message: String(field(payload, 'message')) });
      for (const wake of [...this.waiters]) wake();
    });
    socket.on('disconnect', (reason: string) => {
      this.dropped ??= { atMs: this.now(), reason };
      for (const wake of [...this.waiters]) wake();
    });
  }

  now(): number {
    return Math.round((performance.now() - this.origin) * 10) / 10;
  }

  send(event: string, payload: unknown, evidence?: Evidence[]): number {
    const at = this.now();
    evidence?.push({ direction: 'sent', event, atMs: at, payload: forEvidence(payload) });
    this.sending = true;
    try {
      this.socket.emit(event, payload);
    } finally {
      this.sending = false;
    }
    return at;
  }

  /** The first message from `fromIndex` on that `match`es, waiting up to `timeoutMs` or until the link drops; null when none came. */
  async waitFor(match: (message: Received) => boolean, fromIndex: number, timeoutMs: number, until: () => boolean = () => false): Promise<Received | null> {
    const find = () => this.received.slice(fromIndex).find(match) ?? null;
    const found = find();
    if (found || timeoutMs <= 0 || this.dropped || until()) return found;
    return new Promise((resolve) => {
      const done = (value: Received | null) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(value);
      };
      const wake = () => {
        const hit = find();
        if (hit || this.dropped || until()) done(hit);
      };
      const timer = setTimeout(() => done(find()), timeoutMs);
      this.waiters.add(wake);
    });
  }

  /**
   * The answer of `event` to a request for `sessionId` sent at `sentAt`: the first message that `match`es, unless the
   * bench refused that answer (the wait ends on the refusal) or the link dropped (the wait ends at once).
   */
  async answer(event: string, sessionId: string, match: (message: Received) => boolean, fromIndex: number, sentAt: number, timeoutMs: number): Promise<{ message: Received | null; problem: AnswerProblem | null }> {
    const refusal = () => this.refusals.find((r) => r.atMs >= sentAt && r.sessionId === sessionId && r.message.startsWith(`${event}: `));
    const message = await this.waitFor(match, fromIndex, timeoutMs, () => refusal() !== undefined);
    // the bench handles a message on a later tick than the probe logs it: let it judge this one before asking
    await new Promise((resolve) => setImmediate(resolve));
    const refused = refusal();
    if (refused) return { message, problem: { kind: 'refused', atMs: refused.atMs, text: `${event === EVENTS.assistantReply ? 'reply' : event} refused by the bench: ${refused.code}: ${refused.message.slice(event.length + 2)}${/ bytes exceeds the limit of \d+ bytes$/.test(refused.message) ? ' (maxMessageBytes)' : ''}` } };
    if (!message && this.dropped) return { message, problem: { kind: 'dropped', atMs: this.dropped.atMs, text: this.describeDrop(sentAt) } };
    return { message, problem: null };
  }

  /** The dropped link, relative to a request sent at `sentAt`. */
  describeDrop(sentAt: number): string {
    const drop = this.dropped!;
    const when = drop.atMs >= sentAt ? `${Math.round(drop.atMs - sentAt)} ms after the request` : `${Math.round(sentAt - drop.atMs)} ms before the request`;
    return `the link to the unit dropped ${when} (reason: ${drop.reason})`;
  }

  /** Waits `ms` (to see whether anything more arrives: duplicates, late replies). */
  settle(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** A payload's field, or undefined when the payload is not an object. */
export const field = (payload: unknown, name: string): unknown => (typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>)[name] : undefined);

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
