import type { ContextVector } from '../domain/context.ts';
import type { ProtocolAnomalies } from '../domain/conversation.ts';
import type { AssistantReply, Capabilities } from '../protocol/bridge.ts';
import type { HeadUnitHandler as SdkHeadUnitHandler } from '../../packages/bridge-sdk/src/client.ts';

/** One conversation with the system under test. */
export interface HeadUnitSession {
  readonly sessionId: string;
  /** a_t ← SUT.send(u_t, c). Rejects with SutError on disconnect, timeout or a malformed reply. */
  send(turn: number, text: string, context: ContextVector): Promise<AssistantReply>;
  close(): Promise<void>;
  /** what the transport saw go wrong on the wire while the session was open; read after close (the bridge implements it) */
  anomalies?(): ProtocolAnomalies;
}

/** How the bench reaches a system under test (bridge, HTTP chat endpoint, …). Every transport has this shape. */
export interface HeadUnitConnection {
  readonly describe: string;
  capabilities(): Capabilities;
  openSession(sessionId: string, context: ContextVector): Promise<HeadUnitSession>;
  /**
   * Vehicle context (a payload the caller validated, e.g. VehicleContextMessage of src/vehicle) for one
   * session, or with null for all sessions. Only transports that carry it (the bridge) implement it.
   */
  sendVehicleContext?(sessionId: string | null, payload: unknown): void;
  close(): Promise<void>;
}

export type SutErrorKind = 'disconnected' | 'timeout' | 'malformed' | 'too_large' | 'rate_limited' | 'rejected' | 'unavailable';

/** Any failure of the system under test; the conversation is recorded as sut_error and the campaign carries on. */
export class SutError extends Error {
  constructor(readonly kind: SutErrorKind, message: string) {
    super(`${kind}: ${message}`);
    this.name = 'SutError';
  }
}

/** The reply a head-unit implementation produces for one user turn (the bridge adds sessionId and turn). */
export type HeadUnitReplyBody = Omit<AssistantReply, 'sessionId' | 'turn'>;

/**
 * The head-unit side of the bridge: what a head unit implements so that the bridge client can dial it in to the
 * bench (the reference head unit, a vendor adapter, …). It is the SDK's HeadUnitHandler (packages/bridge-sdk),
 * with the reply in its parsed form, because the bench also calls these handlers in-process.
 */
export interface HeadUnitHandler extends SdkHeadUnitHandler {
  handleTurn(sessionId: string, turn: number, text: string, context: ContextVector | undefined): Promise<HeadUnitReplyBody>;
}
