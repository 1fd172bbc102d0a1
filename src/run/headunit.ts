import { randomBytes } from 'node:crypto';
import { connectHeadUnit, type BridgeClient } from '../bridge/client.ts';
import { startBridgeServer } from '../bridge/server.ts';
import type { SafetyPolicy } from '../domain/safety-policy.ts';
import { bridgeReadiness, referenceDialIn, type ConnectedHeadUnit, type ReferenceVoiceOptions } from './connect.ts';
import { ReferenceHeadUnit, type ReferenceHeadUnitOptions } from '../headunit/reference/reference-headunit.ts';
import type { VehicleMapping } from '../vehicle/mapping.ts';
import { ReferenceBus } from '../headunit/reference/bus-actions.ts';
import { loadActionMapping } from '../vehicle/observe/action-mapping.ts';
import { openFrameSink } from '../vehicle/transports/index.ts';
import type { World } from '../world/world.ts';
import { ConfigError } from '../config/yaml.ts';
import type { HeadUnitConfig } from './headunit-config.ts';

/**
 * Brings up the system under test a campaign config names: the reference head unit dialled in
 * over a loopback bridge inside this process, a head unit that dials in from outside, or an
 * OpenAI-compatible chat endpoint.
 */
export async function connectConfiguredHeadUnit(
  config: HeadUnitConfig,
  log: (line: string) => void = () => undefined,
  options: { vehicleMapping?: VehicleMapping; voice?: ReferenceVoiceOptions; safety?: SafetyPolicy; manual?: ReferenceHeadUnitOptions['manual']; world?: World } = {},
): Promise<ConnectedHeadUnit> {
  if (config.type === 'reference') {
    const token = randomBytes(16).toString('hex');
    // the flood guard stays at its default: replies to the bench's own requests never count against it
    const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token });
    // the unit follows its own policy when the config gives one, else the campaign's (the one the oracle judges by)
    const safety = config.safety ?? options.safety;
    const bus = config.bus ? new ReferenceBus(await openFrameSink(config.bus.transport), loadActionMapping(config.bus.mapping), config.bus.faults) : null;
    const reference = new ReferenceHeadUnit({
      ...(bus ? { bus } : {}),
      ...(config.structuredActions === undefined ? {} : { announceActions: config.structuredActions }),
      worldSeed: config.worldSeed,
      // a world file the campaign names replaces the reference world, for the unit as for the simulator and the oracle
      ...(options.world ? { world: options.world } : {}),
      faults: config.faults,
      ...(config.build ? { build: config.build } : {}),
      vehicleMapping: options.vehicleMapping,
      ...(safety ? { safety } : {}),
      // the owner's-manual skill (manual-QA campaigns): retrieval + extractive answers with its own fault profiles
      ...(options.manual ? { manual: options.manual } : {}),
    });
    let client: BridgeClient | null = null;
    let frontEnd: Awaited<ReturnType<typeof referenceDialIn>>['frontEnd'] = null;
    const closeAll = async () => {
      await client?.close();
      await bridge.close();
      await frontEnd?.close();
      await bus?.close();
    };
    try {
      // a device the unit's voice cannot open ends the start-up here, and closes the bridge already listening
      const dialIn = await referenceDialIn(reference, options.voice && config.acoustic ? { ...options.voice, acoustic: config.acoustic } : options.voice);
      frontEnd = dialIn.frontEnd;
      client = await connectHeadUnit({ url: bridge.url, token, handler: dialIn.handler, audio: dialIn.audio });
      const connection = await bridge.waitForHeadUnit(10_000, reference.unit.name);
      return { connection, bridge, reference, audio: connection.audio, ensureReady: bridgeReadiness(bridge, connection), ...(dialIn.deviceFault ? { deviceFault: dialIn.deviceFault } : {}), close: closeAll };
    } catch (error) {
      await closeAll();
      throw error;
    }
  }
  if (config.type === 'bridge') {
    const token = process.env[config.tokenEnv];
    if (!token) throw new ConfigError(`headUnit.tokenEnv: set the environment variable ${config.tokenEnv} to the shared token the head unit presents`);
    const bridge = await startBridgeServer({
      host: config.host,
      port: config.port,
      token,
      turnTimeoutMs: config.turnTimeoutMs,
      maxMessagesPerSecond: config.maxMessagesPerSecond,
      ...(config.maxMessageBytes ? { maxMessageBytes: config.maxMessageBytes } : {}),
    });
    log(`bridge listening on ${bridge.url}; waiting up to ${config.waitSeconds} s for a head unit to dial in`);
    try {
      const connection = await bridge.waitForHeadUnit(config.waitSeconds * 1000);
      return { connection, bridge, reference: null, audio: connection.audio, ensureReady: bridgeReadiness(bridge, connection, config.reconnectGraceSeconds * 1000), close: () => bridge.close() };
    } catch (error) {
      await bridge.close();
      throw error;
    }
  }
  const { HttpChatHeadUnit } = await import('../headunit/http-chat.ts');
  const apiKey = config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined;
  const connection = new HttpChatHeadUnit({ baseUrl: config.baseUrl, model: config.model, timeoutMs: config.timeoutMs, ...(apiKey ? { apiKey } : {}), ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}) });
  return { connection, bridge: null, reference: null, audio: null, ensureReady: async () => undefined, close: () => connection.close() };
}
