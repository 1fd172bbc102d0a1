import type { BridgeHeadUnitConnection, BridgeServer } from '../bridge/server.ts';
import { ReferenceHeadUnit } from '../headunit/reference/reference-headunit.ts';
import type { HeadUnitConnection, HeadUnitHandler } from '../headunit/types.ts';
import { SocketRelay } from '../bridge/socket-relay.ts';
import type { AudioBinding } from '../bridge/client.ts';
import { HeadUnitVoiceFrontEnd, withVoiceFrontEnd } from '../voice/headunit-voice.ts';
import { createSocketAudioLink } from '../voice/socket-audio-link.ts';
import { AcousticLink, type AcousticDevices } from '../voice/acoustic-link.ts';

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
   * rejects with SutError 'unavailable' when it does not. The runner's pause hook (src/run/run-monitor.ts).
   */
  ensureReady(): Promise<void>;
  /** a unit the bench runs on audio devices (the reference unit's acoustic link): why a device failed, or null; absent: none to fail */
  deviceFault?(): Error | null;
  close(): Promise<void>;
}

/** Gives the reference head unit its voice front end (pocketsphinx ears, espeak-ng mouth). */
export interface ReferenceVoiceOptions {
  /** sentences its recogniser expects: driverVocabulary(campaign seeds); default the quickstart seeds' */
  vocabulary?: readonly string[];
  /** reply-audio failures (they happen after the text reply went back) */
  onError?: (error: Error) => void;
  /** hear and speak through audio devices (the acoustic link) instead of audio over the bridge */
  acoustic?: AcousticDevices;
  /** environment of the audio device programs (PULSE_SERVER, XDG_RUNTIME_DIR) */
  audioEnv?: NodeJS.ProcessEnv;
}

/**
 * What dials in for the reference head unit: the unit itself, or with `voice` the unit behind its
 * voice front end plus the relay that carries its audio (pass it to connectHeadUnit).
 */
export async function referenceDialIn(
  reference: ReferenceHeadUnit,
  voice?: ReferenceVoiceOptions,
): Promise<{ handler: HeadUnitHandler; audio?: SocketRelay | AudioBinding; frontEnd: HeadUnitVoiceFrontEnd | null; deviceFault?: () => Error | null }> {
  if (!voice) return { handler: reference, frontEnd: null };
  if (voice.acoustic) {
    // its microphone and loudspeaker are audio devices; it speaks at real time, as a loudspeaker does
    const link = new AcousticLink({ devices: voice.acoustic, speaks: 'to_bench', env: voice.audioEnv, fields: { output: 'headUnit.acoustic.output', input: 'headUnit.acoustic.input' } });
    await link.open();
    const frontEnd = new HeadUnitVoiceFrontEnd({ link, vocabulary: voice.vocabulary, onError: voice.onError, realtime: true });
    // its audio travels through the air, not over the bridge socket: nothing to bind there
    const overTheAir: AudioBinding = { bind: () => undefined };
    return { handler: withVoiceFrontEnd(reference, frontEnd), audio: overTheAir, frontEnd, deviceFault: () => link.failed() };
  }
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
