/**
 * Structural limits of an inbound message (a bridge message, an app-server request body, a config
 * parsed from YAML), checked by an iterative walk before anything else touches the value:
 * validation, logging, JSON.stringify or size accounting. A recursive walk — JSON.stringify
 * included — overflows the stack on a value nested a few thousand levels deep, and a message that
 * small must never be able to stop the bench.
 */
export interface StructureLimits {
  /** nesting levels of arrays and objects (a scalar at the top is depth 0, `{a: 1}` is depth 1) */
  maxDepth: number;
  /** array elements plus object keys, counted over the whole value */
  maxEntries: number;
  /** characters of any one string, object keys included */
  maxStringChars: number;
}

/** What broke a limit; `code` is the bridge_error code it answers with. */
export interface StructureViolation {
  limit: keyof StructureLimits;
  code: 'invalid_message' | 'too_large';
  message: string;
}

/** Deeper than any bridge message needs (an assistant_reply's trip plan is 7 levels), far below any stack limit. */
export const MAX_MESSAGE_DEPTH = 32;

/** Limits for a bridge message of at most `maxMessageBytes`: no legitimate message of that size has more entries or a longer string. */
export function bridgeStructureLimits(maxMessageBytes: number): StructureLimits {
  return { maxDepth: MAX_MESSAGE_DEPTH, maxEntries: 50_000, maxStringChars: maxMessageBytes };
}

function isBinary(value: object): boolean {
  return value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

/**
 * Walks `value` with an explicit stack and returns the first limit it breaks, or null. It stops at
 * the first violation, so its cost is bounded by the limits, not by the value. Binary parts
 * (ArrayBuffer, Buffer, typed arrays) are leaves: the transport's size cap bounds them.
 */
export function checkStructure(value: unknown, limits: StructureLimits): StructureViolation | null {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  let entries = 0;
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current === 'string') {
      if (current.length > limits.maxStringChars) return violation('maxStringChars', 'too_large', `a string of ${current.length} characters exceeds the limit of ${limits.maxStringChars}`);
      continue;
    }
    if (typeof current !== 'object' || current === null || isBinary(current)) continue;
    if (depth + 1 > limits.maxDepth) return violation('maxDepth', 'invalid_message', `nested deeper than ${limits.maxDepth} levels`);
    if (Array.isArray(current)) {
      entries += current.length;
      if (entries > limits.maxEntries) return violation('maxEntries', 'too_large', `more than ${limits.maxEntries} array elements and object keys`);
      for (const item of current) stack.push({ value: item, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(current);
    entries += keys.length;
    if (entries > limits.maxEntries) return violation('maxEntries', 'too_large', `more than ${limits.maxEntries} array elements and object keys`);
    for (const key of keys) {
      if (key.length > limits.maxStringChars) return violation('maxStringChars', 'too_large', `a key of ${key.length} characters exceeds the limit of ${limits.maxStringChars}`);
      stack.push({ value: (current as Record<string, unknown>)[key], depth: depth + 1 });
    }
  }
  return null;
}

function violation(limit: keyof StructureLimits, code: StructureViolation['code'], message: string): StructureViolation {
  return { limit, code, message };
}
