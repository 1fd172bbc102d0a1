/**
 * Nesting limit of a manual file, checked while reading it (its size cap is FILE_LIMITS.manual,
 * src/domain/input-files.ts): no real manual nests lists, quotes or elements hundreds of levels deep,
 * and the readers refuse deeper nesting by name instead of exhausting the stack.
 */
export const MAX_MANUAL_NESTING = 256;

/** "nested too deeply (limit 256) at …": the message every manual reader gives for nesting beyond the limit. */
export function nestedTooDeeply(where: string): string {
  return `nested too deeply (limit ${MAX_MANUAL_NESTING}) at ${where}`;
}
