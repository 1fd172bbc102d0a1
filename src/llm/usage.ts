import { z } from 'zod';
import { LlmErrorKindSchema } from './types.ts';

/** the role a call served: the user simulator (dialogue simulator, task user), a judge, or a tool-using agent under test */
export const LlmCallKindSchema = z.enum(['simulator', 'judge', 'agent']);
export type LlmCallKind = z.infer<typeof LlmCallKindSchema>;

/** USD per million tokens for metered endpoints, keyed by model reference. Refs not listed are local (GPU-seconds). */
export const PriceTableSchema = z.record(
  z.string(),
  z.strictObject({ inputPerMTokUsd: z.number().min(0), outputPerMTokUsd: z.number().min(0) }),
);
export type PriceTable = z.infer<typeof PriceTableSchema>;

/** One model call (one HTTP request or one in-process generation); a retry is a call of its own. Stored with the run (`llm.calls`). */
export const LlmCallRecordSchema = z.object({
  ref: z.string(),
  kind: LlmCallKindSchema,
  promptTokens: z.number().int().min(0),
  completionTokens: z.number().int().min(0),
  latencyMs: z.number().min(0),
  /** 0 for the first attempt of a structured request, 1 for its first retry, … */
  retries: z.number().int().min(0),
  error: LlmErrorKindSchema.nullable(),
  /** server-reported compute time when known (Ollama total_duration, gguf evaluation) */
  computeMs: z.number().min(0).optional(),
  /** answered from the development cache: not a model call, not counted in calls/tokens/time */
  cached: z.boolean().optional(),
  /** the conversation the call served (ConversationSpec.key), for per-conversation figures */
  conversationKey: z.string().optional(),
});
export type LlmCallRecord = z.infer<typeof LlmCallRecordSchema>;

export const LlmUsageSummarySchema = z.object({
  calls: z.number().int(),
  callsPerTurn: z.number(),
  tokensIn: z.number().int(),
  tokensOut: z.number().int(),
  meanLatencyMs: z.number(),
  /** calls that ended in each error kind (a structured request that failed after retries contributes one per attempt) */
  errors: z.object({
    invalid_output: z.number().int(),
    timeout: z.number().int(),
    refused_endpoint: z.number().int(),
    server_error: z.number().int(),
  }),
  cachedCalls: z.number().int(),
  byKind: z.partialRecord(LlmCallKindSchema, z.object({ calls: z.number().int(), tokensIn: z.number().int(), tokensOut: z.number().int() })),
  /** means over the conversations that made calls: calls, tokens and time spent waiting for models */
  perConversation: z.object({ conversations: z.number().int(), calls: z.number(), tokensIn: z.number(), tokensOut: z.number(), modelSeconds: z.number() }),
  costUsd: z.number().optional(),
  gpuSeconds: z.number().optional(),
});
/** The `llm` section of summary.json. */
export type LlmUsageSummary = z.infer<typeof LlmUsageSummarySchema>;

/** Accounting for every model call of a run; one tracker per campaign, shared by simulator and judge. */
export class LlmUsageTracker {
  private readonly calls: LlmCallRecord[] = [];
  private readonly prices: PriceTable;

  constructor(options: { prices?: PriceTable } = {}) {
    this.prices = PriceTableSchema.parse(options.prices ?? {});
  }

  record(call: LlmCallRecord): void {
    this.calls.push({ ...call });
  }

  /** the calls recorded since the last `drain` */
  get records(): readonly LlmCallRecord[] {
    return this.calls;
  }

  /**
   * Hands over the calls recorded since the last drain and forgets them. A run's recorder stores them with each item
   * (src/run/run-facts.ts), so a long run holds only the calls not stored yet, not every call it made.
   */
  drain(): LlmCallRecord[] {
    return this.calls.splice(0, this.calls.length);
  }

  /** @param turns conversation turns in the run, for calls per turn */
  summary(turns: number): LlmUsageSummary {
    const real = this.calls.filter((c) => !c.cached);
    const errors = { invalid_output: 0, timeout: 0, refused_endpoint: 0, server_error: 0 };
    const byKind: LlmUsageSummary['byKind'] = {};
    let tokensIn = 0;
    let tokensOut = 0;
    let latency = 0;
    let cost = 0;
    let priced = false;
    let gpuMs = 0;
    let local = false;
    for (const call of real) {
      tokensIn += call.promptTokens;
      tokensOut += call.completionTokens;
      latency += call.latencyMs;
      if (call.error) errors[call.error]++;
      const kind = (byKind[call.kind] ??= { calls: 0, tokensIn: 0, tokensOut: 0 });
      kind.calls++;
      kind.tokensIn += call.promptTokens;
      kind.tokensOut += call.completionTokens;
      const price = this.prices[call.ref];
      if (price) {
        priced = true;
        cost += (call.promptTokens * price.inputPerMTokUsd + call.completionTokens * price.outputPerMTokUsd) / 1e6;
      } else if (call.error !== 'refused_endpoint') {
        local = true;
        gpuMs += call.computeMs ?? call.latencyMs;
      }
    }
    const conversations = new Set(real.map((c) => c.conversationKey).filter((k): k is string => k !== undefined));
    const per = (total: number) => (conversations.size ? total / conversations.size : 0);
    const attributed = real.filter((c) => c.conversationKey !== undefined);
    return {
      calls: real.length,
      callsPerTurn: turns > 0 ? real.length / turns : 0,
      tokensIn,
      tokensOut,
      meanLatencyMs: real.length ? latency / real.length : 0,
      errors,
      cachedCalls: this.calls.length - real.length,
      byKind,
      perConversation: {
        conversations: conversations.size,
        calls: per(attributed.length),
        tokensIn: per(attributed.reduce((sum, c) => sum + c.promptTokens, 0)),
        tokensOut: per(attributed.reduce((sum, c) => sum + c.completionTokens, 0)),
        modelSeconds: per(attributed.reduce((sum, c) => sum + c.latencyMs, 0)) / 1000,
      },
      ...(priced ? { costUsd: cost } : {}),
      ...(local ? { gpuSeconds: gpuMs / 1000 } : {}),
    };
  }
}
