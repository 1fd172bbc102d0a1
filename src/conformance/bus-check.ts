import { describeObservedAction, observationLines } from '../domain/bus-observation.ts';
import type { ContextVector } from '../domain/context.ts';
import type { UserTurn } from '../protocol/bridge.ts';
import { ObservationChannel } from '../vehicle/observe/channel.ts';
import type { ObserveConfig } from '../vehicle/observe/config.ts';
import type { CheckResult, Evidence } from './checks.ts';
import type { Received } from './probe.ts';

/** The request of the bus check and the action it must put on the bus (docs/conformance.md, "Actions on the bus"). */
export const BUS_REQUEST = { text: 'Set the temperature to 21 degrees.', kind: 'climate_setpoint', value: 21 } as const;
/** A set point on the bus within this of the one asked is the one asked (DBC signals are scaled, e.g. 0.5 °C steps). */
const SETPOINT_TOLERANCE = 0.25;

type Outcome = Pick<CheckResult, 'status' | 'detail'> & { evidence: Evidence[] };

/** What the bus check borrows from the run: the kit's own session and turn steps, with their evidence. */
export interface BusCheckSteps {
  context: ContextVector;
  now(): number;
  openSession(sessionId: string, evidence: Evidence[]): Promise<{ ms: number } | { missing: string }>;
  ask(turn: UserTurn, evidence: Evidence[]): Promise<{ reply: Received | null }>;
  endSession(sessionId: string, evidence: Evidence[]): void;
}

const note = (atMs: number, text: string): Evidence => ({ direction: 'note', event: 'bus', atMs, payload: text });

/**
 * Asks for 21 °C and watches the bus the operator named (listen-only) for the mapped climate set point: it must
 * appear within the window, with 21. The bus decides; the reply is evidence only (text_turn judges replies).
 */
export async function busActionsCheck(observe: ObserveConfig, steps: BusCheckSteps): Promise<Outcome> {
  const evidence: Evidence[] = [];
  let channel: ObservationChannel;
  try {
    channel = await ObservationChannel.open(observe);
  } catch (error) {
    return { status: 'fail', detail: `cannot listen on the bus: ${(error as Error).message}`, evidence };
  }
  try {
    const described = channel.describe();
    evidence.push(note(steps.now(), `listening on ${described.transport} with mapping ${described.mapping} (${described.dbc}), window ${described.windowMs} ms`));
    if (!channel.mapping.carries.includes(BUS_REQUEST.kind)) {
      return { status: 'skipped', detail: `the mapping ${described.mapping} does not carry ${BUS_REQUEST.kind} (it carries ${described.carries.join(', ')})`, evidence };
    }
    const sessionId = 'conformance-bus';
    const opened = await steps.openSession(sessionId, evidence);
    if ('missing' in opened) return { status: 'fail', detail: opened.missing, evidence };
    const watch = channel.watchTurn();
    await steps.ask({ sessionId, turn: 0, text: BUS_REQUEST.text, context: steps.context }, evidence);
    const seen = await watch.close();
    steps.endSession(sessionId, evidence);
    for (const line of observationLines(seen)) evidence.push(note(steps.now(), `on the bus: ${line}`));
    const setpoints = seen.actions.filter((a) => a.kind === BUS_REQUEST.kind);
    const right = setpoints.find((a) => typeof a.value === 'number' && Math.abs(a.value - BUS_REQUEST.value) < SETPOINT_TOLERANCE);
    if (right) return { status: 'pass', detail: `asked for ${BUS_REQUEST.value} °C, the bus shows ${describeObservedAction(right)}`, evidence };
    if (setpoints.length > 0) return { status: 'fail', detail: `asked for ${BUS_REQUEST.value} °C, the bus shows another value: ${setpoints.map(describeObservedAction).join('; ')}`, evidence };
    return { status: 'fail', detail: `asked for ${BUS_REQUEST.value} °C: ${observationLines(seen).join('; ')}`, evidence };
  } finally {
    await channel.close();
  }
}
