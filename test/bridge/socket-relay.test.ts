import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { SocketRelay } from '../../src/bridge/socket-relay.ts';
import { SutError } from '../../src/headunit/types.ts';

/** A socket stand-in: emit() records what was sent; deliver() plays an incoming event to the listeners. */
class FakeSocket extends EventEmitter {
  readonly sent: unknown[][] = [];
  override emit(event: string, ...args: unknown[]): boolean {
    this.sent.push([event, ...args]);
    return true;
  }
  deliver(event: string, ...args: unknown[]): void {
    super.emit(event, ...args);
  }
}

describe('SocketRelay', () => {
  it('moves listeners registered before dial-in onto each new socket and off the old one', () => {
    const relay = new SocketRelay('head unit "x"');
    const heard: unknown[] = [];
    relay.on('audio_chunk', (chunk) => heard.push(chunk));
    const first = new FakeSocket();
    relay.bind(first);
    first.deliver('audio_chunk', 1);
    const second = new FakeSocket();
    relay.bind(second);
    first.deliver('audio_chunk', 'stale');
    second.deliver('audio_chunk', 2);
    expect(heard).toEqual([1, 2]);
    expect(first.listenerCount('audio_chunk')).toBe(0);
  });

  it('sends on the current socket and fails as disconnected when there is none', () => {
    const relay = new SocketRelay('head unit "x"');
    expect(() => relay.emit('audio_end', {})).toThrow(SutError);
    expect(() => relay.emit('audio_end', {})).toThrow(/disconnected: head unit "x" is not connected; cannot send audio_end/);
    const socket = new FakeSocket();
    relay.bind(socket);
    relay.emit('audio_end', { turn: 1 });
    expect(socket.sent).toEqual([['audio_end', { turn: 1 }]]);
    relay.unbind(new FakeSocket()); // a stale socket's disconnect changes nothing
    expect(relay.bound).toBe(true);
    relay.unbind(socket);
    expect(relay.bound).toBe(false);
    expect(() => relay.emit('audio_end', {})).toThrow(SutError);
  });

  it('off() removes a listener from the current and from future sockets', () => {
    const relay = new SocketRelay('u');
    const heard: unknown[] = [];
    const listener = (v: unknown) => heard.push(v);
    const socket = new FakeSocket();
    relay.bind(socket);
    relay.on('audio_chunk', listener);
    relay.off('audio_chunk', listener);
    socket.deliver('audio_chunk', 1);
    const next = new FakeSocket();
    relay.bind(next);
    next.deliver('audio_chunk', 2);
    expect(heard).toEqual([]);
  });
});
