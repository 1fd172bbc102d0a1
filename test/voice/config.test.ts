import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { snrLevels } from '../../src/voice/acoustics.ts';
import { VoiceConfigSchema, checkVoicePrerequisites } from '../../src/voice/config.ts';

describe('VoiceConfigSchema', () => {
  it('accepts every voice: example in docs/voice.md', () => {
    const doc = readFileSync(new URL('../../docs/voice.md', import.meta.url), 'utf8');
    const examples = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => parse(m[1]).voice);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const example of examples) expect(VoiceConfigSchema.safeParse(example).error).toBeUndefined();
    expect(snrLevels(VoiceConfigSchema.parse(examples[1]).acoustics)).toEqual([null, 20, 10, 5, 0]);
  });

  it('has offline defaults and rejects unknown recognisers by field', () => {
    const config = VoiceConfigSchema.parse({});
    expect(config).toMatchObject({ enabled: true, realtime: false, vad: true, replyRecognizer: { engine: 'pocketsphinx' }, saveAudio: true });
    expect(snrLevels(config.acoustics)).toEqual([null]);
    const bad = VoiceConfigSchema.safeParse({ replyRecognizer: { engine: 'cloud' } });
    expect(bad.error?.issues[0].path.join('.')).toBe('replyRecognizer.engine');
  });

  it('finds the installed system packages, and names the missing Whisper model', async () => {
    expect(await checkVoicePrerequisites()).toEqual([]);
    const problems = await checkVoicePrerequisites(VoiceConfigSchema.parse({ replyRecognizer: { engine: 'whisper', modelDir: 'models/none-here' } }));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/Whisper model not found at .*models\/none-here/);
  });
});
