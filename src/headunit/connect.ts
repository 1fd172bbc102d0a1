import { randomBytes } from 'node:crypto';
import { connectHeadUnit, type BridgeClient } from '../bridge/client.ts';
import { startBridgeServer, type BridgeHeadUnitConnection, type BridgeServer } from '../bridge/server.ts';
import type { HeadUnitConfig } from '../campaign/config.ts';
import { ConfigError } from '../campaign/config.ts';
import { ReferenceHeadUnit, type ReferenceHeadUnitOptions } from './reference/reference-headunit.ts';
import type { HeadUnitConnection, HeadUnitHandler } from './types.ts';
import type { VehicleMapping } from '../vehicle/mapping.ts';
import type { SafetyPolicy } from '../domain/safety-policy.ts';
import { SocketRelay } from '../bridge/socket-relay.ts';
import { HeadUnitVoiceFrontEnd, withVoiceFrontEnd } from '../voice/headunit-voice.ts';
import { createSocketAudioLink } from '../voice/socket-audio-link.ts';

export interface ConnectedHeadUnit {
  connection: HeadUnitConnection;
  /** the bridge the head unit dialled in to (absent for the HTTP adapter) */
  bridge: BridgeServer | null;
  /** the in-process reference head unit, when the config asks for it */
  reference: ReferenceHeadUnit | null;
  /** the unit's audio streams on the bench side (bridge head units; absent or null: text only) */
  audio?: SocketRelay | null;
  /**
   * Waits (up to the reconnect grace) for a head unit that dropped off the bridge to dial in again;
   * rejects with SutError 'unavailable' when it does not. The runner's pause hook (src/bridge/run-monitor.ts).
   */
  ensureReady(): Promise<void>;
  close(): Promise<void>;
}

/** Gives the reference head unit its voice front end (pocketsphinx ears, espeak-ng mouth). */
export interface ReferenceVoiceOptions {
  /** sentences its recogniser expects: driverVocabulary(campaign seeds); default the quickstart seeds' */
  vocabulary?: readonly string[];
  /** reply-audio failures (they happen after the text reply went back) */
  onError?: (error: Error) => void;
}

/**
 * What dials in for the reference head unit: the unit itself, or with `voice` the unit behind its
 * voice front end plus the relay that carries its audio (pass it to connectHeadUnit).
 */
export function referenceDialIn(reference: ReferenceHeadUnit, voice?: ReferenceVoiceOptions): { handler: HeadUnitHandler; audio?: SocketRelay; frontEnd: HeadUnitVoiceFrontEnd | null } {
  if (!voice) return { handler: reference, frontEnd: null };
  const audio = new SocketRelay(`head unit "${reference.unit.name}"`);
  const frontEnd = new HeadUnitVoiceFrontEnd({ link: createSocketAudioLink(audio), vocabulary: voice.vocabulary, onError: voice.onError });
  return { handler: withVoiceFrontEnd(reference, frontEnd), audio, frontEnd };
}

/** How long new conversations wait for the in-process reference head unit to come back (bridge configs set reconnectGraceSeconds). */
export const RECONNECT_GRACE_MS = 5_000;

export function bridgeReadiness(bridge: BridgeServer, connection: BridgeHeadUnitConnection, graceMs = RECONNECT_GRACE_MS): () => Promise<void> {
  return async () => {
    if (!connection.connected) await bridge.waitForHeadUnit(graceMs, connection.name);
  };
}

/**
 * Brings up the system under test a campaign config names: the reference head unit dialled in
 * over a loopback bridge inside this process, a head unit that dials in from outside, or an
 * OpenAI-compatible chat endpoint.
 */
export async function connectConfiguredHeadUnit(
  config: HeadUnitConfig,
  log: (line: string) => void = () => undefined,
  options: { vehicleMapping?: VehicleMapping; voice?: ReferenceVoiceOptions; safety?: SafetyPolicy; manual?: ReferenceHeadUnitOptions['manual'] } = {},
): Promise<ConnectedHeadUnit> {
  if (config.type === 'reference') {
    const token = randomBytes(16).toString('hex');
    // the flood guard stays at its default: replies to the bench's own requests never count against it
    const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token });
    // the unit follows its own policy when the config gives one, else the campaign's (the one the oracle judges by)
    const safety = config.safety ?? options.safety;
    const reference = new ReferenceHeadUnit({
      worldSeed: config.worldSeed,
      faults: config.faults,
      vehicleMapping: options.vehicleMapping,
      ...(safety ? { safety } : {}),
      // the owner's-manual skill (manual-QA campaigns): retrieval + extractive answers with its own fault profiles
      ...(options.manual ? { manual: options.manual } : {}),
    });
    const { handler, audio, frontEnd } = referenceDialIn(reference, options.voice);
    let client: BridgeClient | null = null;
    const closeAll = async () => {
      await client?.close();
      await bridge.close();
      await frontEnd?.close();
    };
    try {
      client = await connectHeadUnit({ url: bridge.url, token, handler, audio });
      const connection = await bridge.waitForHeadUnit(10_000, reference.unit.name);
      return { connection, bridge, reference, audio: connection.audio, ensureReady: bridgeReadiness(bridge, connection), close: closeAll };
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
  const { HttpChatHeadUnit } = await import('./http-chat.ts');
  const apiKey = config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined;
  const connection = new HttpChatHeadUnit({ baseUrl: config.baseUrl, model: config.model, timeoutMs: config.timeoutMs, ...(apiKey ? { apiKey } : {}), ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}) });
  return { connection, bridge: null, reference: null, audio: null, ensureReady: async () => undefined, close: () => connection.close() };
}
