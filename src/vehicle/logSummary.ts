/**
 * What every CAN log reader tells the user: problems one line each (escaped, capped), then one summary line, and
 * whether the read counts as a failure. Used by `icabench can decode` and `icabench can replay`.
 */

/** How many problem lines a reader prints before it only counts them. */
export const MAX_PROBLEM_LINES = 20;
/** How much of a bad input line a message quotes. */
export const MAX_EXCERPT_CHARS = 80;

/**
 * Input text made safe to print: printable ASCII is kept, everything else (control bytes, binary, non-ASCII) is written
 * as \xNN or \u{N}, and the result is cut at `max` characters with the number of characters left out (plus
 * `charsAlreadyCut`, for a text a reader had already shortened).
 */
export function escapeExcerpt(text: string, max = MAX_EXCERPT_CHARS, charsAlreadyCut = 0): string {
  let out = '';
  let taken = 0;
  for (const ch of text) {
    if (out.length >= max) break;
    const code = ch.codePointAt(0)!;
    if (code >= 0x20 && code < 0x7f && ch !== '\\') out += ch;
    else if (ch === '\\') out += '\\\\';
    else if (code < 0x100) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += `\\u{${code.toString(16)}}`;
    taken += ch.length;
  }
  const more = text.length - taken + charsAlreadyCut;
  return more > 0 ? `${out}… (${more} more chars)` : out;
}

/** Prints problem lines up to MAX_PROBLEM_LINES, then only counts them; `finish` prints how many were left out. */
export class CappedProblemPrinter {
  private printed = 0;
  private suppressed = 0;

  constructor(private readonly write: (line: string) => void = (line) => console.error(line)) {}

  report(line: string): void {
    if (this.printed < MAX_PROBLEM_LINES) {
      this.printed++;
      this.write(line);
    } else this.suppressed++;
  }

  finish(source: string): void {
    if (this.suppressed > 0) this.write(`${source}: ${this.suppressed} more problems not shown (the first ${MAX_PROBLEM_LINES} are above)`);
  }
}

export interface LogReadCounts {
  /** frames read and used (decoded or sent) */
  decoded: number;
  /** well-formed frames refused (unknown id, wrong length, send failure) */
  rejected: number;
  /** lines that are not frames at all */
  junk: number;
}

/** The one summary line, e.g. "drive.log: 4080 frames decoded, 2 rejected, 1 junk lines, 3 values out of range". */
export function formatReadSummary(source: string, counts: LogReadCounts, options: { verb?: string; extra?: string[] } = {}): string {
  const extra = options.extra ?? [];
  return `${source}: ${counts.decoded} frames ${options.verb ?? 'decoded'}, ${counts.rejected} rejected, ${counts.junk} junk lines${extra.length ? `, ${extra.join(', ')}` : ''}`;
}

/**
 * Why the read failed, or undefined when it did not: nothing valid was read, more than `maxBadShare` of the lines
 * were not frames (a file that is mostly something else is not a log with a few bad lines), or (strict) anything was
 * rejected or skipped; with rejectedAlwaysFails (replay: a frame the transport refused) any rejected frame fails.
 * The CLI turns a reason into exit code 1.
 */
export function readFailure(counts: LogReadCounts, strict: boolean, options: { rejectedAlwaysFails?: boolean; maxBadShare?: number } = {}): string | undefined {
  if (counts.decoded === 0) return 'no valid frame was read';
  const lines = counts.decoded + counts.rejected + counts.junk;
  if (options.maxBadShare !== undefined && counts.junk > options.maxBadShare * lines) {
    return `${counts.junk} of ${lines} lines are not frames (${((counts.junk / lines) * 100).toFixed(1)}%), above --max-bad ${options.maxBadShare}`;
  }
  if (options.rejectedAlwaysFails && counts.rejected > 0) return `${counts.rejected} frames rejected`;
  if (strict && counts.rejected + counts.junk > 0) return `--strict: ${counts.rejected} rejected frames and ${counts.junk} junk lines`;
  return undefined;
}
