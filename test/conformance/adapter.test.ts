import { afterEach, describe, expect, it } from 'vitest';
import { startBridgeServer, type BridgeServer } from '../../src/bridge/server.ts';
import { runConformance } from '../../src/conformance/run.ts';
import { connectAssistantAdapter, pcm16kFromWav, wavFile } from '../../packages/bridge-sdk/examples/assistant-adapter.ts';
import { startFakeLlmServer, systemPromptOf, type FakeLlmServer, type RecordedRequest } from '../helpers/fakeLlmServer.ts';

const TOKEN = 'adapter-token';
const TURN_TIMEOUT_MS = 5000;

/** A stand-in model that reads its prompt like a model would: the range from the car state, tool calls when offered tools. */
function modelResponder(request: RecordedRequest) {
  const messages = request.body.messages as Array<{ role: string; content: string }>;
  const last = messages.at(-1)!;
  if (request.body.tools?.length) {
    return last.role === 'tool' ? { content: 'The sunroof is open halfway.', toolCalls: [] } : { toolCalls: [{ name: 'open_close_sunroof', arguments: { percentage: 50 } }] };
  }
  const range = /remaining range (\d+) km/.exec(systemPromptOf(request))?.[1];
  if (/range/i.test(last.content)) return range ? `You can drive about ${range} km.` : 'I do not know the range.';
  return `Sure: ${last.content}`;
}

/** 0.3 s of a tone as a 24 kHz WAV (what OpenAI's speech endpoint sends), so the adapter must resample. */
function speechWav(): Uint8Array {
  const samples = new Int16Array(7200);
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / 24000));
  return wavFile(new Uint8Array(samples.buffer), 24000);
}

let bridge: BridgeServer | null = null;
let model: FakeLlmServer | null = null;
afterEach(async () => {
  await bridge?.close();
  await model?.close();
  bridge = null;
  model = null;
});

describe('the SDK example adapter (packages/bridge-sdk/examples/assistant-adapter.ts)', () => {
  for (const api of ['openai', 'ollama'] as const) {
    it(`turns an ${api === 'openai' ? 'OpenAI-compatible' : 'Ollama'}-served assistant into a unit that passes every conformance check, voice and tools included`, async () => {
      model = await startFakeLlmServer({ respond: modelResponder, transcription: 'what is my remaining range', speechWav: speechWav() });
      bridge = await startBridgeServer({ token: TOKEN, turnTimeoutMs: TURN_TIMEOUT_MS });
      const running = runConformance({ bridge, turnTimeoutMs: TURN_TIMEOUT_MS, waitMs: 30_000, reconnectWaitMs: 10_000 });
      const client = await connectAssistantAdapter(
        { url: bridge.url, token: TOKEN },
        {
          api,
          baseUrl: api === 'openai' ? `${model.url}/v1` : model.url,
          model: 'qwen2.5:14b',
          voice: { baseUrl: `${model.url}/v1`, transcriptionModel: 'whisper-1', speechModel: 'tts-1', voice: 'alloy' },
        },
      );
      try {
        const report = await running;
        expect(Object.fromEntries(report.checks.map((c) => [c.id, `${c.status}: ${c.detail}`]))).toMatchObject(
          // the optional bus check is skipped without a bus to watch
          Object.fromEntries(report.checks.map((c) => [c.id, expect.stringMatching(c.id === 'bus_actions' ? /^skipped: / : /^pass: /)])),
        );
        const audio = report.checks.find((c) => c.id === 'audio')!;
        // 0.3 s at 16 kHz is 4800 samples: 15 chunks of 20 ms
        expect(audio.detail).toBe('assistant_reply and 15 valid reply audio chunks with a matching audio_end');
        // the car's state reached the model through the prompt, and the driver's audio reached the recogniser as a WAV file
        const chats = model.chatRequests();
        expect(chats.some((r) => systemPromptOf(r).includes('remaining range 173 km'))).toBe(true);
        const transcription = model.requests.find((r) => r.path === '/v1/audio/transcriptions')!;
        expect(String(transcription.body)).toMatch(/name="file"; filename="driver\.wav"[\s\S]*RIFF[\s\S]*WAVE/);
        const toolTurn = chats.find((r) => r.body.tools?.length && (r.body.messages as Array<{ role: string }>).some((m) => m.role === 'tool'))!;
        expect(toolTurn.body.tools).toHaveLength(57);
      } finally {
        await client.close();
      }
    }, 120_000);
  }

  it('reads a speech WAV at another rate as 16 kHz PCM', () => {
    const pcm = pcm16kFromWav(speechWav());
    expect(pcm.length).toBe(4800 * 2);
    expect(() => pcm16kFromWav(new Uint8Array(20))).toThrow('not a WAV file');
  });
});
