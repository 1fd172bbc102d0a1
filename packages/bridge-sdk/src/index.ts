/**
 * @icabench/bridge-sdk: the head-unit side of the icabench bridge (icabench-bridge/1 and the icabench-tools/1
 * extension). The wire schemas here are the ones the bench validates with: one source for both ends.
 */
export {
  connectHeadUnit,
  REDIAL_BACKOFF_MS,
  HANDSHAKE_ATTEMPTS,
  HANDSHAKE_BACKOFF_MS,
  SPOKEN_TURN_TEXT,
  type AudioBinding,
  type BridgeClient,
  type BridgeClientExtension,
  type BridgeClientOptions,
  type HeadUnitHandler,
  type HeadUnitReply,
  type SpokenTurn,
} from './client.ts';
export { DriverAudioInbox, streamSpeech, type AudioSocket, type DriverUtterance, type SpeakOptions } from './audio.ts';
export { toolsExtension, type ToolAssistant, type ToolAssistantReply, type ToolConversationMessage } from './tools.ts';
export { guarded } from './guard.ts';
export { describeZodError } from './validation.ts';
export * from './protocol/bridge.ts';
export * from './protocol/audio.ts';
export * from './protocol/context.ts';
export * from './protocol/structure.ts';
export * from './protocol/tools.ts';
export * from './protocol/vehicle.ts';
