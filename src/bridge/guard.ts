/** One last-resort guard for both ends of the bridge: the SDK's (packages/bridge-sdk/src/guard.ts). */
export { errorMessage, guarded } from '../../packages/bridge-sdk/src/guard.ts';
