/**
 * The bench's one worker pool: runs `work` over `items` with at most `concurrency` items in flight, taking them
 * in index order. Before each item is taken, `beforeTake` (when given) may stop the pool from taking more: the
 * items in flight finish, no new one starts. The first error from `work` rejects the pool (items already in flight
 * still run to their end). Used by campaigns (conversations) and the judge benchmark (pairs).
 */
export interface PoolOptions {
  concurrency: number;
  /** asked before each item is taken; false (or a promise of false) stops taking items */
  beforeTake?: () => boolean | Promise<boolean>;
}

export async function runPool<T>(items: readonly T[], work: (item: T, index: number) => Promise<void>, options: PoolOptions): Promise<void> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError(`runPool: concurrency must be a positive integer, got ${options.concurrency}`);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      if (options.beforeTake && !(await options.beforeTake())) return;
      // another worker may have taken the last item while this one waited in beforeTake
      if (next >= items.length) return;
      const index = next++;
      await work(items[index], index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, Math.max(1, items.length)) }, worker));
}
