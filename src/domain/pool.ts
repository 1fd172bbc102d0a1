/**
 * The bench's one worker pool: runs `work` over `items` with at most `concurrency` items in flight, taking them
 * in order. `items` may be any iterable (a campaign's plan is paged from the store as it goes: the pool holds the
 * items in flight, not the run). Before each item is taken, `beforeTake` (when given) may stop the pool from taking more: the
 * items in flight finish, no new one starts. The first error from `work` rejects the pool (items already in flight
 * still run to their end). Used by campaigns (conversations) and the judge benchmark (pairs).
 */
export interface PoolOptions {
  concurrency: number;
  /** asked before each item is taken; false (or a promise of false) stops taking items */
  beforeTake?: () => boolean | Promise<boolean>;
}

export async function runPool<T>(items: Iterable<T>, work: (item: T, index: number) => Promise<void>, options: PoolOptions): Promise<void> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) throw new RangeError(`runPool: concurrency must be a positive integer, got ${options.concurrency}`);
  const source = items[Symbol.iterator]();
  // one item looked ahead: a worker asks beforeTake only while there is an item to take, as with an array
  let ahead = source.next();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (!ahead.done) {
      if (options.beforeTake && !(await options.beforeTake())) return;
      // another worker may have taken the last item while this one waited in beforeTake
      if (ahead.done) return;
      const item = ahead.value;
      ahead = source.next();
      await work(item, next++);
    }
  };
  // an array's length bounds the workers; a paged source's workers that find nothing left stop at once
  await Promise.all(Array.from({ length: Math.min(options.concurrency, Array.isArray(items) ? Math.max(1, items.length) : options.concurrency) }, worker));
}
