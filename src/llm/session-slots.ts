import { z } from 'zod';

/**
 * Hints that keep a conversation's calls where the model host has its prompt cached (issue #37). Each call of a
 * dialogue campaign extends the conversation's previous call (docs/llm-tiers.md, "Layout"), so a host that keeps
 * the conversation on one slot or cache entry computes only what is new. Per provider flavour (`llm.cacheHints`):
 * - `llama.cpp`: llama-server's `id_slot` (the conversation's own slot, SessionSlots below) and `cache_prompt: true`;
 * - `prompt-cache-key`: `prompt_cache_key` (OpenAI and servers that route by it) set to the conversation's key;
 * - `off` (default): no hint; llama-server and Ollama then pick a slot by prompt similarity.
 * Ollama's API has no slot field: its runner picks the slot whose cache shares the longest prefix; what keeps its
 * cache is the same model for every role and `keep_alive` (llm.keepAlive), which every Ollama call sends.
 */
export const CacheHintsSchema = z.enum(['off', 'llama.cpp', 'prompt-cache-key']);
export type CacheHints = z.infer<typeof CacheHintsSchema>;

/**
 * One conversation (a session) per slot of a llama-server (`--parallel N` slots): a session keeps the slot it was
 * given until it ends (endSession) or, when every slot has a session, until a new session takes the slot whose
 * session called least recently. A session's calls run one at a time (a call naming a busy slot would wait on the
 * server for it anyway; here it waits without holding a place in the limiter), so its rubric calls follow each
 * other on the slot and each reuses the previous one's prefix.
 */
export class SessionSlots {
  private readonly owners: (string | null)[];
  private readonly lastCall: number[];
  private readonly slotOf = new Map<string, number>();
  private readonly chains = new Map<string, Promise<void>>();
  private clock = 0;

  constructor(readonly slots: number) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`llm.slots must be a positive integer, got ${slots}`);
    this.owners = Array.from({ length: slots }, () => null);
    this.lastCall = Array.from({ length: slots }, () => 0);
  }

  /** Runs `task` on the session's slot once the session's previous call has finished. */
  async run<T>(session: string, task: (slot: number) => Promise<T>): Promise<T> {
    const before = this.chains.get(session) ?? Promise.resolve();
    let finished!: () => void;
    const chain = before.then(() => new Promise<void>((resolve) => (finished = resolve)));
    this.chains.set(session, chain);
    await before;
    try {
      return await task(this.slotFor(session));
    } finally {
      finished();
      if (this.chains.get(session) === chain) this.chains.delete(session);
    }
  }

  /** A call's slot: the session's own, else a free one (least recently used first), else the one whose session called least recently. */
  slotFor(session: string): number {
    const own = this.slotOf.get(session);
    if (own !== undefined) {
      this.lastCall[own] = ++this.clock;
      return own;
    }
    let pick = -1;
    for (let i = 0; i < this.slots; i++) {
      const free = this.owners[i] === null;
      const pickFree = pick >= 0 && this.owners[pick] === null;
      if (pick < 0 || (free && !pickFree) || (free === pickFree && this.lastCall[i] < this.lastCall[pick])) pick = i;
    }
    const previous = this.owners[pick];
    if (previous !== null) this.slotOf.delete(previous);
    this.owners[pick] = session;
    this.slotOf.set(session, pick);
    this.lastCall[pick] = ++this.clock;
    return pick;
  }

  /** The session is over: its slot is free for the next one (its cache stays until then). */
  end(session: string): void {
    const slot = this.slotOf.get(session);
    if (slot === undefined) return;
    this.slotOf.delete(session);
    this.owners[slot] = null;
  }
}

const shared = new Map<string, SessionSlots>();

/** One SessionSlots per server endpoint, shared by every provider that talks to it (the simulator and the judge of a conversation on one slot). */
export function sharedSessionSlots(endpoint: string, slots: number): SessionSlots {
  let found = shared.get(endpoint);
  if (!found) {
    found = new SessionSlots(slots);
    shared.set(endpoint, found);
  }
  return found;
}

/** A conversation ended: every endpoint frees the slot it held for it. */
export function endSession(session: string): void {
  for (const slots of shared.values()) slots.end(session);
}
