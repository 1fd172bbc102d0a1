/**
 * JSON text in which bigints (exact CAN values wider than 53 bits) are written as plain JSON numbers with every digit,
 * e.g. {"CR_Acu_SN":6263398323264770332}. JSON itself puts no limit on a number's digits; a reader that parses numbers
 * as doubles (JSON.parse) rounds them, one that keeps big integers (Python's json, jq 1.7) reads them exactly. Everything else is written as JSON.stringify writes it.
 * See docs/vehicle.md ("Exact 64-bit values").
 */
export function exactJson(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? 'null' : exactJson(item))).join(',')}]`;
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const parts: string[] = [];
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function') continue;
      parts.push(`${JSON.stringify(key)}:${exactJson(item)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value);
}
