/**
 * The figures of a campaign on the modelled local model host (test/helpers/modelHost.ts), from the fake server's
 * request log: per role (model + task), the prompt tokens per turn, the share of them served from a slot's cache,
 * the request bytes per turn and the modelled GPU-seconds per judged turn, with and without prefix reuse.
 */
import { stepOf, type RecordedRequest } from '../test/helpers/fakeLlmServer.ts';

export interface RoleCost {
  calls: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  bytes: number;
  modelMs: number;
  modelMsWithoutReuse: number;
}

export type HostFigures = Record<string, RoleCost>;

/** A call's role: the model it was sent to and the bench step it serves (ExtractTargets, EvaluateTurn, …). */
export function roleOf(request: RecordedRequest): string {
  return `${request.body?.model ?? '?'} ${stepOf(request) ?? 'other'}`;
}

/** The host's charges summed per role (requests the host did not charge, such as errors, are left out). */
export function hostFigures(requests: readonly RecordedRequest[]): HostFigures {
  const roles: HostFigures = {};
  for (const request of requests) {
    const charge = request.charge;
    if (!charge) continue;
    const role = (roles[roleOf(request)] ??= { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, bytes: 0, modelMs: 0, modelMsWithoutReuse: 0 });
    role.calls++;
    role.promptTokens += charge.promptTokens;
    role.cachedTokens += charge.cachedTokens;
    role.completionTokens += charge.completionTokens;
    role.bytes += request.bytes;
    role.modelMs += charge.modelMs;
    role.modelMsWithoutReuse += charge.modelMsWithoutReuse;
  }
  return roles;
}

/** Every role together. */
export function totalCost(figures: HostFigures): RoleCost {
  const total: RoleCost = { calls: 0, promptTokens: 0, cachedTokens: 0, completionTokens: 0, bytes: 0, modelMs: 0, modelMsWithoutReuse: 0 };
  for (const role of Object.values(figures)) for (const key of Object.keys(total) as (keyof RoleCost)[]) total[key] += role[key];
  return total;
}

const fmt = (value: number, digits = 0) => value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** One role's figures per turn, as one table cell. */
export function describeRoleCost(cost: RoleCost, turns: number): string {
  const cached = cost.promptTokens ? (100 * cost.cachedTokens) / cost.promptTokens : 0;
  return `${fmt(cost.promptTokens / turns)} prompt tokens/turn (${fmt(cost.calls / turns, 2)} calls), ${fmt(cached, 1)}% cached, ${fmt(cost.bytes / turns / 1024, 1)} KiB/turn, ${fmt(cost.modelMs / turns / 1000, 3)} GPU-s/turn (${fmt(cost.modelMsWithoutReuse / turns / 1000, 3)} without reuse)`;
}
