import { formatMinutes, minutesOfDay, type ContextVector } from '../../domain/context.ts';
import type { ConversationSpec } from '../../domain/conversation.ts';
import type { HeadUnitConnection } from '../../headunit/types.ts';
import { framesToMessage } from '../../vehicle/bridge.ts';
import type { VehicleConfig } from '../../vehicle/config.ts';
import { framesForInterval, type VehicleTimeline } from '../../vehicle/feed.ts';
import { loadMapping, type VehicleMapping } from '../../vehicle/mapping.ts';
import { loadScenario, type Scenario } from '../../vehicle/scenario.ts';
import { openFrameSink, type FrameSink } from '../../vehicle/transports/index.ts';
import { ConfigError } from './config.ts';
import { ObservationChannel } from '../../vehicle/observe/channel.ts';
import type { VehicleFeedFactSchema } from '../../run/run-facts.ts';
import type { z } from 'zod';

export interface ConversationDrive {
  contextAt(turn: number): ContextVector;
  /** sends the frames leading up to turn `turn` before the turn itself goes out */
  beforeTurn(connection: HeadUnitConnection, sessionId: string, turn: number): Promise<void>;
  /** frames sent for this conversation so far (recorded with the run as `vehicle.frames`) */
  framesSent(): number;
}

/**
 * The scenario's motion (speed, gear, parking brake, battery, climate) at the place and clock of a
 * conversation: position stays where the conversation was sampled, its clock runs from the
 * conversation's time at scenario second `startS`.
 */
function motionAt(scenario: Scenario, base: ContextVector, startS: number): VehicleTimeline {
  const origin = minutesOfDay(base.time) * 60;
  return {
    stateAt: (t) => {
      const clock = origin + Math.max(0, t - startS);
      return {
        vehicle: scenario.stateAt(t).vehicle,
        position: base.location.position,
        date: base.date,
        time: formatMinutes(Math.floor(clock / 60)),
        second: Math.floor(clock % 60),
      };
    },
  };
}

/** How much of the bus the head unit sees before each turn: the last second of every cyclic message. */
const WINDOW_BEFORE_TURN_S = 1;

/**
 * Feeds a drive scenario to the conversations of a campaign: the context vector of turn t is the
 * scenario's state at startS + t × secondsPerTurn (with `context: motion`, only the car's state, at the
 * conversation's own place and clock), and before each turn the frames of the second leading up
 * to it go to the head unit — over the bridge to that conversation's session, or to a candump log,
 * an SLCAN adapter or a SocketCAN interface.
 */
export class VehicleFeed {
  private constructor(
    readonly config: VehicleConfig,
    readonly scenario: Scenario,
    readonly mapping: VehicleMapping,
    private readonly sink: FrameSink | null,
    /** listens for what the head unit does on the bus (vehicle.observe); null when the campaign does not watch */
    readonly observation: ObservationChannel | null,
  ) {}

  static async open(config: VehicleConfig, concurrency: number): Promise<VehicleFeed> {
    const scenario = loadScenario(config.scenario);
    const mapping = loadMapping(config.mapping);
    if (config.transport.kind !== 'bridge' && concurrency > 1) {
      throw new ConfigError(`vehicle.transport: ${config.transport.kind} is one bus shared by every conversation; set concurrency: 1 (or use the bridge transport)`);
    }
    const latestStart = typeof config.startS === 'number' ? config.startS : config.startS.to;
    if (latestStart > scenario.config.durationS) {
      throw new ConfigError(`vehicle.startS: ${latestStart} s is past the end of scenario ${scenario.name} (${scenario.config.durationS} s)`);
    }
    if (config.observe && concurrency > 1) {
      throw new ConfigError('vehicle.observe: the bench watches one bus, so one conversation at a time can be judged by it; set concurrency: 1');
    }
    const sink = config.transport.kind === 'bridge' ? null : await openFrameSink(config.transport);
    try {
      const observation = config.observe ? await ObservationChannel.open(config.observe) : null;
      return new VehicleFeed(config, scenario, mapping, sink, observation);
    } catch (error) {
      await sink?.close();
      throw error;
    }
  }

  /** What one conversation sees of the drive: its context at each turn and the frames sent before each turn. */
  drive(spec: ConversationSpec): ConversationDrive {
    const startS = spec.vehicleStartS ?? (typeof this.config.startS === 'number' ? this.config.startS : this.config.startS.from);
    const timeline: VehicleTimeline = this.config.context === 'motion' ? motionAt(this.scenario, spec.context, startS) : this.scenario;
    const secondOf = (turn: number) => startS + turn * this.config.secondsPerTurn;
    let framesSent = 0;
    return {
      framesSent: () => framesSent,
      contextAt: (turn) => {
        const t = secondOf(turn);
        if (this.config.context === 'drive') return this.scenario.contextAt(t, spec.context);
        const snapshot = timeline.stateAt(t);
        return { ...spec.context, date: snapshot.date, time: snapshot.time, vehicle: snapshot.vehicle };
      },
      beforeTurn: async (connection, sessionId, turn) => {
        const at = secondOf(turn);
        const frames = framesForInterval(timeline, this.mapping, Math.max(0, at - WINDOW_BEFORE_TURN_S), at + 1e-9);
        framesSent += frames.length;
        if (this.sink) {
          await this.sink.send(frames);
          return;
        }
        if (!connection.sendVehicleContext) throw new ConfigError(`vehicle.transport: bridge, but ${connection.describe} cannot receive vehicle context`);
        connection.sendVehicleContext(sessionId, framesToMessage(this.mapping.dbcName, frames));
      },
    };
  }

  /** What feeds the bus (recorded with the run as `vehicle.feed`). */
  describe(): z.infer<typeof VehicleFeedFactSchema> {
    return { scenario: this.scenario.name, mapping: this.config.mapping, dbc: this.mapping.dbcName, transport: this.sink?.describe ?? 'bridge', secondsPerTurn: this.config.secondsPerTurn };
  }

  async close(): Promise<void> {
    await this.observation?.close();
    await this.sink?.close();
  }
}
