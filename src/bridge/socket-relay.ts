import { SutError } from '../headunit/types.ts';
import { guarded } from './guard.ts';

type Listener = (...args: any[]) => void;

/** The part of a socket.io Socket (server or client side) a relay drives. */
export interface EventSocket {
  emit(event: string, ...args: unknown[]): unknown;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

export interface SocketRelayOptions {
  /**
   * Decides, per incoming event, whether the listeners hear it (the bench side applies the bridge's
   * structural limits and its rate limit for unsolicited audio here). Default: every event.
   */
  admit?: (event: string, args: readonly unknown[]) => boolean;
  /** an exception a listener threw (or a promise it returned rejected with); default: rethrown */
  onListenerError?: (error: unknown, event: string) => void;
}

/**
 * Events beyond the bridge's own request/reply messages (the audio streams) over whichever socket
 * the bridge currently uses: listeners registered before the head unit dials in, or while it
 * reconnects, are moved onto each new socket. Audio for a session the bench has open is never
 * counted against the bridge's message-rate limit (20 ms chunks come at 50 per second per stream
 * by design); what `admit` refuses never reaches the listeners.
 */
export class SocketRelay implements EventSocket {
  private socket: EventSocket | null = null;
  private readonly listeners: Array<{ event: string; listener: Listener; bound: Listener }> = [];

  constructor(
    private readonly describe: string,
    private readonly options: SocketRelayOptions = {},
  ) {}

  get bound(): boolean {
    return this.socket !== null;
  }

  bind(socket: EventSocket): void {
    if (this.socket) this.unbind(this.socket);
    this.socket = socket;
    for (const { event, bound } of this.listeners) socket.on(event, bound);
  }

  /** Detaches from `socket` if it is the current one (a stale socket's disconnect changes nothing). */
  unbind(socket: EventSocket): void {
    if (this.socket !== socket) return;
    for (const { event, bound } of this.listeners) socket.off(event, bound);
    this.socket = null;
  }

  emit(event: string, ...args: unknown[]): void {
    if (!this.socket) throw new SutError('disconnected', `${this.describe} is not connected; cannot send ${event}`);
    this.socket.emit(event, ...args);
  }

  on(event: string, listener: Listener): void {
    const { admit, onListenerError } = this.options;
    const deliver: Listener = (...args: unknown[]) => {
      if (!admit || admit(event, args)) listener(...args);
    };
    const bound = onListenerError ? guarded((error) => onListenerError(error, event), deliver) : deliver;
    this.listeners.push({ event, listener, bound });
    this.socket?.on(event, bound);
  }

  off(event: string, listener: Listener): void {
    const index = this.listeners.findIndex((l) => l.event === event && l.listener === listener);
    if (index < 0) return;
    const [removed] = this.listeners.splice(index, 1);
    this.socket?.off(event, removed.bound);
  }
}
