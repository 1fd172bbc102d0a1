/**
 * A cost model of a local model host (llama.cpp's llama-server with `--parallel N`, Ollama with
 * OLLAMA_NUM_PARALLEL, vLLM with prefix caching), for the fake model server (fakeLlmServer.ts, option `host`).
 *
 * The host has N slots. A call holds one slot for
 *     (prompt tokens − tokens served from the slot's cache) × prefill cost  +  completion tokens × decode cost.
 * Each slot keeps the tokens of its last call (prompt and completion, as llama.cpp's slots and Ollama's runner keep
 * their KV cache), and a call of the same model reuses the longest prefix its prompt shares with them; at least the prompt's last
 * token is always computed, as the servers do. Which slot: the one the call names (llama.cpp's `id_slot`), waiting
 * for it when busy; else, as llama-server picks, the idle slot whose cache shares the longest prefix with the prompt
 * when that is at least half the prompt, otherwise the least recently used idle slot. No idle slot: the call queues
 * (first come, first served). Slots run side by side without slowing each other (batched decoding on one GPU is close
 * to that for a few streams; a simplification). Output schemas cost nothing in the prompt: the servers turn them into
 * grammars. A cache miss is simply the whole prompt computed.
 *
 * Tokens are a stand-in: a character count divided by four (the usual rule of thumb for English text; JSON and
 * non-English text have more tokens per character on a real tokenizer), prefixes compared character by character.
 */

/** The figures of one host. */
export interface ModelHostCost {
  slots: number;
  /** ms of one slot per prompt token not served from its cache */
  prefillMsPerToken: number;
  /** ms of one slot per completion token */
  decodeMsPerToken: number;
}

/**
 * A 7–8B model (4–8-bit weights) on one workstation GPU, 8 slots (llama-server `--parallel 8`). Published llama.cpp
 * figures for such models: a server log of Llama 3 8B at 6 bits on an RTX 4090 reports about 4,700 prompt tokens/s
 * and 93 generated tokens/s (dmatora/LLM-inference-speed-benchmarks, issue 10); llama.cpp's own benchmark table
 * of a 7B model at 4 bits on an older Tesla P40 about 900 and 57 (ggml-org/llama.cpp pull request 4766). The
 * constants sit in that range: prefill at 4,000 tokens/s (0.25 ms a token), generation at about 67 tokens/s per
 * stream (15 ms a token).
 */
export const LOCAL_GPU_HOST: ModelHostCost = { slots: 8, prefillMsPerToken: 0.25, decodeMsPerToken: 15 };

/** The share of a prompt a slot's cache must hold for the slot to be chosen by prefix (llama.cpp's default). */
export const SLOT_PROMPT_SIMILARITY = 0.5;

/** The stand-in tokenizer: a text's token count. */
export const tokensOf = (text: string): number => Math.ceil(text.length / 4);

/** A prompt as a chat template lays it out for the model: the messages in order, then the assistant's turn. */
export function chatPromptText(messages: ReadonlyArray<{ role: string; content: string }>): string {
  return `${messages.map((m) => `<|${m.role}|>\n${m.content}\n`).join('')}<|assistant|>\n`;
}

/** What one call cost on the host. */
export interface HostCharge {
  slot: number;
  promptTokens: number;
  /** prompt tokens served from the slot's cache */
  cachedTokens: number;
  completionTokens: number;
  /** the slot time the call took: uncached prompt tokens × prefill + completion tokens × decode */
  modelMs: number;
  /** its prefill part */
  prefillMs: number;
  /** the same call on a host without prefix reuse */
  modelMsWithoutReuse: number;
}

function sharedPrefixLength(a: string, b: string): number {
  const end = Math.min(a.length, b.length);
  let i = 0;
  while (i < end && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

interface Slot {
  /** the model the slot last ran: a cache holds one model's tokens */
  model: string;
  /** what the slot's cache holds: the last call's prompt and completion */
  cached: string;
  busy: boolean;
  /** when it was last released (a counter), for least-recently-used choice */
  lastUsed: number;
}

interface Waiting {
  model: string;
  prompt: string;
  wanted: number | undefined;
  grant: (slot: number) => void;
}

export class ModelHost {
  private readonly slots: Slot[];
  private readonly waiting: Waiting[] = [];
  private clock = 0;

  constructor(
    readonly cost: ModelHostCost = LOCAL_GPU_HOST,
    /** false: every call computes its whole prompt (the same host without prefix reuse) */
    private readonly prefixReuse = true,
  ) {
    if (!Number.isInteger(cost.slots) || cost.slots < 1) throw new Error(`model host: slots must be a positive integer, got ${cost.slots}`);
    this.slots = Array.from({ length: cost.slots }, () => ({ model: '', cached: '', busy: false, lastUsed: 0 }));
  }

  /** Resolves with the slot the call runs on once it is free: `wanted` (a slot number; out of range counts as none) or the best idle one. */
  acquire(prompt: string, wanted?: number, model = ''): Promise<number> {
    const named = wanted !== undefined && Number.isInteger(wanted) && wanted >= 0 && wanted < this.slots.length ? wanted : undefined;
    return new Promise((grant) => {
      this.waiting.push({ model, prompt, wanted: named, grant });
      this.dispatch();
    });
  }

  /**
   * What a call of `model` with this prompt and completion costs on `slot`; the slot's cache then holds them.
   * `cachePrompt` false: the call asked for no reuse (llama-server's `cache_prompt: false`) and computes its whole prompt.
   */
  charge(slot: number, prompt: string, completion: string, model = '', cachePrompt = true): HostCharge {
    const held = this.slots[slot];
    const promptTokens = tokensOf(prompt);
    const completionTokens = tokensOf(completion);
    // the last prompt token is always computed (it yields the first output token)
    const reusable = cachePrompt ? this.reusable(held, model, prompt) : 0;
    const cachedTokens = Math.max(0, Math.floor(Math.min(reusable, prompt.length - 1) / 4));
    held.model = model;
    held.cached = prompt + completion;
    const { prefillMsPerToken: prefill, decodeMsPerToken: decode } = this.cost;
    const prefillMs = (promptTokens - cachedTokens) * prefill;
    return {
      slot,
      promptTokens,
      cachedTokens,
      completionTokens,
      modelMs: prefillMs + completionTokens * decode,
      prefillMs,
      modelMsWithoutReuse: promptTokens * prefill + completionTokens * decode,
    };
  }

  release(slot: number): void {
    this.slots[slot].busy = false;
    this.slots[slot].lastUsed = ++this.clock;
    this.dispatch();
  }

  /** The characters of `prompt` a slot's cache holds: its shared prefix, when the slot last ran the same model. */
  private reusable(slot: Slot, model: string, prompt: string): number {
    return this.prefixReuse && slot.model === model ? sharedPrefixLength(slot.cached, prompt) : 0;
  }

  /** Grants idle slots to waiting calls in arrival order; a call that names a busy slot keeps waiting without holding up the others. */
  private dispatch(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const call = this.waiting[i];
      const slot = call.wanted !== undefined ? (this.slots[call.wanted].busy ? -1 : call.wanted) : this.bestIdleSlot(call.model, call.prompt);
      if (slot < 0) {
        i++;
        continue;
      }
      this.waiting.splice(i, 1);
      this.slots[slot].busy = true;
      call.grant(slot);
    }
  }

  /**
   * llama.cpp's choice: the idle slot sharing the longest prefix with the prompt when that prefix is at least half the
   * prompt (its `--slot-prompt-similarity`, default 0.5), else the least recently used idle slot; -1 when none is idle.
   */
  private bestIdleSlot(model: string, prompt: string): number {
    let best = -1;
    let bestShared = -1;
    let oldest = -1;
    this.slots.forEach((slot, i) => {
      if (slot.busy) return;
      if (oldest < 0 || slot.lastUsed < this.slots[oldest].lastUsed) oldest = i;
      const shared = this.reusable(slot, model, prompt);
      if (shared > bestShared) {
        best = i;
        bestShared = shared;
      }
    });
    return best >= 0 && bestShared >= SLOT_PROMPT_SIMILARITY * prompt.length ? best : oldest;
  }
}
