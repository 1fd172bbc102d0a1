import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIO_EVENTS, AudioChunkSchema, AudioEndSchema } from '../../src/protocol/audio.ts';

describe('docs/bridge-protocol.md, section "Audio"', () => {
  const doc = readFileSync(new URL('../../docs/bridge-protocol.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Audio\n'), doc.indexOf('\n## ', doc.indexOf('## Audio\n') + 1));

  it('has examples the audio schemas accept', () => {
    const examples = [...section.matchAll(/```jsonc\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]));
    expect(examples).toHaveLength(2);
    const chunk = AudioChunkSchema.parse(examples[0]);
    expect(Array.from(new Int16Array(chunk.data.buffer.slice(chunk.data.byteOffset, chunk.data.byteOffset + chunk.data.byteLength)))).toEqual([0, 1, -1, 2]);
    expect(AudioEndSchema.safeParse(examples[1]).error).toBeUndefined();
  });

  it('names the events the code uses', () => {
    expect(section).toContain(`\`${AUDIO_EVENTS.chunk}\``);
    expect(section).toContain(`\`${AUDIO_EVENTS.end}\``);
  });
});
