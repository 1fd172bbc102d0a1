/** The head-unit side of the bridge is the bridge SDK's client (packages/bridge-sdk): the bench's units use what vendors embed. */
export {
  connectHeadUnit,
  REDIAL_BACKOFF_MS,
  type BridgeClient,
  type BridgeClientExtension,
  type BridgeClientOptions,
  type AudioBinding,
} from '../../packages/bridge-sdk/src/client.ts';
export { toolsExtension, type ToolAssistant } from '../../packages/bridge-sdk/src/tools.ts';
