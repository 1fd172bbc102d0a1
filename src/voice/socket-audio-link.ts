import { AUDIO_EVENTS, AudioChunkSchema, AudioEndSchema, type AudioChunk, type AudioEnd } from '../protocol/audio.ts';
import { ValidationError, parseOrThrow } from '../domain/validation.ts';
import { nowMs, type AudioLink } from './audio-link.ts';
import type { EventSocket } from '../bridge/socket-relay.ts';


export interface SocketAudioLinkOptions {
  /** called with each malformed audio message, which is then dropped (the campaign carries on) */
  onInvalid?: (error: ValidationError) => void;
}

/**
 * An AudioLink over a socket.io connection (a socket, or a bridge's SocketRelay that follows
 * reconnects), using the audio_chunk / audio_end events of src/protocol/audio.ts. PCM travels as
 * socket.io binary attachments (no base64 overhead).
 */
export function createSocketAudioLink(socket: EventSocket, options: SocketAudioLinkOptions = {}): AudioLink {
  const validated = <T>(parse: () => T): T | null => {
    try {
      return parse();
    } catch (error) {
      if (error instanceof ValidationError) {
        options.onInvalid?.(error);
        return null;
      }
      throw error;
    }
  };
  return {
    sendChunk: (chunk) => {
      const data = typeof chunk.data === 'string' || chunk.data instanceof ArrayBuffer ? chunk.data : Buffer.from(chunk.data.buffer, chunk.data.byteOffset, chunk.data.byteLength);
      socket.emit(AUDIO_EVENTS.chunk, { ...chunk, data });
    },
    endOfUtterance: (end) => socket.emit(AUDIO_EVENTS.end, end),
    onChunk: (listener) => {
      const handler = (raw: unknown) => {
        const receivedAt = nowMs();
        const chunk = validated<AudioChunk>(() => parseOrThrow(AudioChunkSchema, raw, AUDIO_EVENTS.chunk));
        if (chunk) listener(chunk, receivedAt);
      };
      socket.on(AUDIO_EVENTS.chunk, handler);
      return () => socket.off(AUDIO_EVENTS.chunk, handler);
    },
    onEndOfUtterance: (listener) => {
      const handler = (raw: unknown) => {
        const receivedAt = nowMs();
        const end = validated<AudioEnd>(() => parseOrThrow(AudioEndSchema, raw, AUDIO_EVENTS.end));
        if (end) listener(end, receivedAt);
      };
      socket.on(AUDIO_EVENTS.end, handler);
      return () => socket.off(AUDIO_EVENTS.end, handler);
    },
  };
}
