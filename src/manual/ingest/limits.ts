/**
 * Limits of a manual file, checked while reading it (the one bounded reader, src/config/yaml.ts): a
 * car's owner's manual is tens of MB at most (the vendored BMW chapters are under 1 MB each), so a
 * bigger file is a mistake (or /dev/zero); no real manual nests lists, quotes or elements hundreds
 * of levels deep, and the readers refuse deeper nesting by name instead of exhausting the stack.
 */
export const MAX_MANUAL_BYTES = 256 * 1024 * 1024;
export const MAX_MANUAL_NESTING = 256;

/** "nested too deeply (limit 256) at …": the message every manual reader gives for nesting beyond the limit. */
export function nestedTooDeeply(where: string): string {
  return `nested too deeply (limit ${MAX_MANUAL_NESTING}) at ${where}`;
}
