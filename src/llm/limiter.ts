/**
 * At most `maxConcurrent` calls in flight; the rest wait in FIFO order (backpressure:
 * a campaign with more workers than the server has slots queues here instead of piling
 * requests onto the server, where they would time out).
 */
/**
 * A second gate every call passes after its limiter's own slot, shared beyond this process: a fleet
 * worker installs its Redis-backed host limit (src/fleet/host-limiter.ts), so a model host's slots
 * hold across every worker of the fleet. None by default.
 */
export interface SharedSlotGate {
  run<T>(endpoint: string, maxConcurrent: number, task: () => Promise<T>): Promise<T>;
}

let slotGate: SharedSlotGate | null = null;

/** Installs (or, with null, removes) the process's shared slot gate. */
export function setSharedSlotGate(gate: SharedSlotGate | null): void {
  slotGate = gate;
}

export class ConcurrencyLimiter {
  private active = 0;
  private peak = 0;
  private held = 0;
  private runs = 0;
  private readonly waiting: Array<() => void> = [];

  /** endpoint: the server this limiter guards; with it, calls also pass the shared slot gate when one is installed */
  constructor(
    readonly maxConcurrent: number,
    readonly endpoint: string | null = null,
  ) {
    if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) {
      throw new Error(`concurrency limit must be a positive integer, got ${maxConcurrent}`);
    }
  }

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /** highest number of calls that were in flight at once */
  get peakInFlight(): number {
    return this.peak;
  }

  /** calls that held a slot and finished, and the total time they held it (ms): how busy the slots were */
  get slotUse(): { calls: number; heldMs: number } {
    return { calls: this.runs, heldMs: this.held };
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.maxConcurrent) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    this.peak = Math.max(this.peak, this.active);
    const start = performance.now();
    try {
      const gate = slotGate;
      return await (gate && this.endpoint ? gate.run(this.endpoint, this.maxConcurrent, task) : task());
    } finally {
      this.held += performance.now() - start;
      this.runs++;
      const next = this.waiting.shift();
      // hand the slot straight to the next waiter so the count never dips and lets a newcomer jump the queue
      if (next) next();
      else this.active--;
    }
  }
}

const shared = new Map<string, ConcurrencyLimiter>();

/**
 * One limiter per server endpoint, shared by every provider that talks to it (the simulator and
 * the judge on the same Ollama share its parallel slots). The first caller fixes the limit.
 */
export function sharedLimiter(endpoint: string, maxConcurrent: number): ConcurrencyLimiter {
  let limiter = shared.get(endpoint);
  if (!limiter) {
    limiter = new ConcurrencyLimiter(maxConcurrent, endpoint);
    shared.set(endpoint, limiter);
  }
  return limiter;
}
