/**
 * Per-unit limits the bench enforces on what a head unit sends: message size and message rate.
 */

/**
 * Size of a received socket.io payload in bytes: binary parts by length, the rest as JSON text.
 * JSON.stringify recurses: call this only on a payload that passed checkStructure (src/protocol/structure.ts).
 */
export function payloadBytes(value: unknown): number {
  if (value === undefined) return 0;
  if (value instanceof ArrayBuffer) return value.byteLength;
  if (ArrayBuffer.isView(value)) return value.byteLength;
  let binary = 0;
  const json = JSON.stringify(value, (_key, inner: unknown) => {
    if (inner instanceof ArrayBuffer) {
      binary += inner.byteLength;
      return null;
    }
    if (ArrayBuffer.isView(inner)) {
      binary += inner.byteLength;
      return null;
    }
    // Buffer.toJSON runs before the replacer sees it: count its bytes instead of the JSON array
    if (isSerializedBuffer(inner)) {
      binary += inner.data.length;
      return null;
    }
    return inner;
  });
  return binary + (json === undefined ? 0 : Buffer.byteLength(json, 'utf8'));
}

function isSerializedBuffer(value: unknown): value is { type: 'Buffer'; data: number[] } {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((value as { data?: unknown }).data)
  );
}

/**
 * Token bucket: allows bursts up to `perSecond` messages and a sustained `perSecond` rate.
 * `now` is injectable so the behaviour is testable without waiting.
 */
export class RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  /** Takes one token; false when the unit is over its rate. */
  tryTake(): boolean {
    const t = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((t - this.last) / 1000) * this.perSecond);
    this.last = t;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/**
 * The transport-level cap (socket.io maxHttpBufferSize). It sits above the message limit so that a
 * moderately oversized message reaches the bench and is reported as too_large for its turn; only a
 * payload beyond this cap makes socket.io drop the connection (reported as disconnected).
 */
export function transportCapBytes(maxMessageBytes: number): number {
  return maxMessageBytes * 4 + 64 * 1024;
}
