/** The wire format has one source, the bridge SDK (packages/bridge-sdk) that head-unit teams embed; the bench reads it here. */
export * from '../../packages/bridge-sdk/src/protocol/bridge.ts';
