import { SutError } from '../headunit/types.ts';

type Listener = (...args: any[]) => void;

/** The part of a socket.io Socket (server or client side) a relay drives. */
export interface EventSocket {
  emit(event: string, ...args: unknown[]): unknown;
  on(event: string, listener: Listener): unknown;
  off(event: string, listener: Listener): unknown;
}

/**
 * Events beyond the bridge's own request/reply messages (the audio streams) over whichever socket
 * the bridge currently uses: listeners registered before the head unit dials in, or while it
 * reconnects, are moved onto each new socket. These events bypass the bridge's message-rate limit,
 * because 20 ms audio chunks come at 50 per second per stream by design (transport size caps still apply).
 */
export class SocketRelay implements EventSocket {
  private socket: EventSocket | null = null;
  private readonly listeners: Array<{ event: string; listener: Listener }> = [];

  constructor(private readonly describe: string) {}

  get bound(): boolean {
    return this.socket !== null;
  }

  bind(socket: EventSocket): void {
    if (this.socket) this.unbind(this.socket);
    this.socket = socket;
    for (const { event, listener } of this.listeners) socket.on(event, listener);
  }

  /** Detaches from `socket` if it is the current one (a stale socket's disconnect changes nothing). */
  unbind(socket: EventSocket): void {
    if (this.socket !== socket) return;
    for (const { event, listener } of this.listeners) socket.off(event, listener);
    this.socket = null;
  }

  emit(event: string, ...args: unknown[]): void {
    if (!this.socket) throw new SutError('disconnected', `${this.describe} is not connected; cannot send ${event}`);
    this.socket.emit(event, ...args);
  }

  on(event: string, listener: Listener): void {
    this.listeners.push({ event, listener });
    this.socket?.on(event, listener);
  }

  off(event: string, listener: Listener): void {
    const index = this.listeners.findIndex((l) => l.event === event && l.listener === listener);
    if (index >= 0) this.listeners.splice(index, 1);
    this.socket?.off(event, listener);
  }
}
