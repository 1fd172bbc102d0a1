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
  /** listeners per event, and the one socket listener per event that admits a message once and hands it to them */
  private readonly events = new Map<string, { listeners: Listener[]; dispatch: Listener }>();

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
    for (const [event, { dispatch }] of this.events) socket.on(event, dispatch);
  }

  /** Detaches from `socket` if it is the current one (a stale socket's disconnect changes nothing). */
  unbind(socket: EventSocket): void {
    if (this.socket !== socket) return;
    for (const [event, { dispatch }] of this.events) socket.off(event, dispatch);
    this.socket = null;
  }

  emit(event: string, ...args: unknown[]): void {
    if (!this.socket) throw new SutError('disconnected', `${this.describe} is not connected; cannot send ${event}`);
    this.socket.emit(event, ...args);
  }

  on(event: string, listener: Listener): void {
    let entry = this.events.get(event);
    if (!entry) {
      const { admit, onListenerError } = this.options;
      const listeners: Listener[] = [];
      const deliver: Listener = (...args: unknown[]) => {
        if (admit && !admit(event, args)) return;
        for (const l of [...listeners]) l(...args);
      };
      entry = { listeners, dispatch: onListenerError ? guarded((error) => onListenerError(error, event), deliver) : deliver };
      this.events.set(event, entry);
      this.socket?.on(event, entry.dispatch);
    }
    entry.listeners.push(listener);
  }

  off(event: string, listener: Listener): void {
    const entry = this.events.get(event);
    const index = entry?.listeners.indexOf(listener) ?? -1;
    if (!entry || index < 0) return;
    entry.listeners.splice(index, 1);
    if (entry.listeners.length > 0) return;
    this.events.delete(event);
    this.socket?.off(event, entry.dispatch);
  }
}
