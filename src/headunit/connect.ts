import { randomBytes } from 'node:crypto';
import { connectHeadUnit, type BridgeClient } from '../bridge/client.ts';
import { startBridgeServer, type BridgeServer } from '../bridge/server.ts';
import type { HeadUnitConfig } from '../campaign/config.ts';
import { ConfigError } from '../campaign/config.ts';
import { ReferenceHeadUnit } from './reference/reference-headunit.ts';
import type { HeadUnitConnection } from './types.ts';

export interface ConnectedHeadUnit {
  connection: HeadUnitConnection;
  /** the bridge the head unit dialled in to (absent for the HTTP adapter) */
  bridge: BridgeServer | null;
  /** the in-process reference head unit, when the config asks for it */
  reference: ReferenceHeadUnit | null;
  close(): Promise<void>;
}

/**
 * Brings up the system under test a campaign config names: the reference head unit dialled in
 * over a loopback bridge inside this process, a head unit that dials in from outside, or an
 * OpenAI-compatible chat endpoint.
 */
export async function connectConfiguredHeadUnit(
  config: HeadUnitConfig,
  log: (line: string) => void = () => undefined,
): Promise<ConnectedHeadUnit> {
  if (config.type === 'reference') {
    const token = randomBytes(16).toString('hex');
    const bridge = await startBridgeServer({ host: '127.0.0.1', port: 0, token });
    const reference = new ReferenceHeadUnit({ worldSeed: config.worldSeed, faults: config.faults });
    let client: BridgeClient | null = null;
    try {
      client = await connectHeadUnit({ url: bridge.url, token, handler: reference });
      const connection = await bridge.waitForHeadUnit(10_000, reference.unit.name);
      return {
        connection,
        bridge,
        reference,
        close: async () => {
          await client?.close();
          await bridge.close();
        },
      };
    } catch (error) {
      await client?.close();
      await bridge.close();
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
      ...(config.maxMessageBytes ? { maxMessageBytes: config.maxMessageBytes } : {}),
    });
    log(`bridge listening on ${bridge.url}; waiting up to ${config.waitSeconds} s for a head unit to dial in`);
    try {
      const connection = await bridge.waitForHeadUnit(config.waitSeconds * 1000);
      return { connection, bridge, reference: null, close: () => bridge.close() };
    } catch (error) {
      await bridge.close();
      throw error;
    }
  }
  const { HttpChatHeadUnit } = await import('./http-chat.ts');
  const apiKey = config.apiKeyEnv ? process.env[config.apiKeyEnv] : undefined;
  const connection = new HttpChatHeadUnit({ baseUrl: config.baseUrl, model: config.model, timeoutMs: config.timeoutMs, ...(apiKey ? { apiKey } : {}), ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}) });
  return { connection, bridge: null, reference: null, close: () => connection.close() };
}
