/** The key format of planned conversations, read where repeats are grouped (pass^k) and where the plan is made. */

/**
 * The conversation plan a stored conversation key belongs to: its key without the repeat segment
 * (`c00003-seed-r2-snr10` → `c00003-seed-snr10`), so the repeats of one plan group together (pass^k).
 */
export function conversationPlanOfKey(key: string): string {
  const match = /-r\d+(?=-|$)(?!.*-r\d+(?=-|$))/.exec(key);
  return match ? key.slice(0, match.index) + key.slice(match.index + match[0].length) : key;
}
