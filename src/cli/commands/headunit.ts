import type { Command } from 'commander';
import { connectHeadUnit, toolsExtension } from '../../bridge/client.ts';
import { BRIDGE_TOKEN_ENV } from '../../protocol/bridge.ts';
import { FaultConfigSchema, FAULT_PROFILE_NAMES } from '../../headunit/reference/faults.ts';
import { ReferenceHeadUnit } from '../../headunit/reference/reference-headunit.ts';
import { parseOrThrow } from '../../domain/validation.ts';
import { describeSafetyPolicy, parseSafetyPolicyRef, SAFETY_POLICY_REF_FORMS } from '../../domain/safety-policy.ts';
import { referenceDialIn } from '../../run/connect.ts';
import { checkVoicePrerequisites } from '../../voice/config.ts';
import { toolAgentFactory } from '../../kinds/tool-agents/bridge-unit.ts';

export function registerHeadunitCommands(program: Command): void {
  program
    .command('headunit')
    .description('run the reference head unit as its own process; it dials in to a bench bridge and redials (with backoff) whenever the link ends')
    .option('--url <url>', 'the bench bridge URL', 'http://127.0.0.1:7311')
    .option('--token <token>', `shared token (default: $${BRIDGE_TOKEN_ENV})`)
    .option('--faults <profiles>', `comma-separated fault profiles, or "all" (${FAULT_PROFILE_NAMES.join(', ')})`, '')
    .option('--fault-rate <p>', 'probability that an applicable fault fires', '0.5')
    .option('--fault-seed <n>', 'seed of the fault draws', '7')
    .option('--world-seed <n>', 'seed of the generated world', '1')
    .option('--safety-policy <ref>', `when it refuses distracting or dangerous requests: ${SAFETY_POLICY_REF_FORMS.map((f) => f.split(' ')[0]).join(', ')}`, 'nhtsa-2013')
    .option('--voice', 'answer spoken turns: recognise the driver audio (pocketsphinx) and speak replies (espeak-ng)')
    .option('--audio-input <source>', 'with --voice: hear the driver on this audio device (a microphone; PulseAudio/PipeWire source name, see `icabench voice devices`) instead of audio over the bridge')
    .option('--audio-output <sink>', 'with --voice: speak replies on this audio device (a loudspeaker) instead of audio over the bridge')
    .option('--tool-agent <agent>', 'also speak icabench-tools/1 (tool-using tasks): "replay" (replays the vendored CAR-bench task) or a model reference (ollama:<model>, openai-compat:<url>#<model>)')
    .action(async (options: { url: string; token?: string; faults: string; faultRate: string; faultSeed: string; worldSeed: string; safetyPolicy: string; voice?: boolean; audioInput?: string; audioOutput?: string; toolAgent?: string }) => {
      const token = options.token ?? process.env[BRIDGE_TOKEN_ENV];
      if (!token) throw new Error(`--token or $${BRIDGE_TOKEN_ENV} is required: the bench only accepts head units that present its shared token`);
      const faults = parseOrThrow(
        FaultConfigSchema,
        { profiles: options.faults === 'all' ? 'all' : options.faults.split(',').filter(Boolean), rate: Number(options.faultRate), seed: Number(options.faultSeed) },
        '--faults/--fault-rate/--fault-seed',
      );
      const safety = parseSafetyPolicyRef(options.safetyPolicy);
      const reference = new ReferenceHeadUnit({ worldSeed: Number(options.worldSeed), faults, safety });
      if (options.voice) {
        const problems = await checkVoicePrerequisites();
        if (problems.length > 0) throw new Error(`--voice: ${problems.join('; ')}`);
      }
      const { handler, audio, frontEnd } = await referenceDialIn(
        reference,
        options.voice
          ? {
              onError: (error) => console.error(`voice: could not speak a reply: ${error.message}`),
              ...(options.audioInput || options.audioOutput ? { acoustic: acousticDevices(options.audioInput, options.audioOutput) } : {}),
            }
          : undefined,
      );
      const client = await connectHeadUnit({
        url: options.url,
        token,
        handler,
        reconnect: true,
        audio,
        ...(options.toolAgent ? { extensions: toolsExtension(toolAgentFactory(options.toolAgent)) } : {}),
        onBridgeError: (error) => console.error(`bench: ${error.code}${error.sessionId ? ` (session ${error.sessionId})` : ''}: ${error.message}`),
        onLinkEvent: (message) => console.error(message),
      });
      console.log(
        `reference head unit connected to ${options.url} (faults: ${options.faults || 'none'}; safety policy ${describeSafetyPolicy(safety)}${frontEnd ? '; voice on' : ''}${options.toolAgent ? `; tool agent ${options.toolAgent}` : ''}); Ctrl+C to stop`,
      );
      process.once('SIGINT', () => void Promise.all([client.close(), frontEnd?.close()]).then(() => process.exit(0)));
    });
}

function acousticDevices(input: string | undefined, output: string | undefined): { input: string; output: string } {
  if (!input || !output) throw new Error('--audio-input and --audio-output go together: the unit hears on one device and speaks on the other');
  return { input, output };
}
