import { writeFileSync } from 'node:fs';
import { createRng } from '../../src/domain/rng.ts';

/**
 * Writes a tiny llama-architecture model as a valid GGUF v3 file: random F32 weights, one block,
 * and a SentencePiece-style vocabulary of byte tokens plus printable ASCII characters, so any text
 * (and therefore any JSON the grammar allows) can be tokenised. It produces gibberish; it exists
 * so the node-llama-cpp path can be exercised without downloading a model.
 */
export interface TinyGgufOptions {
  embedding?: number;
  heads?: number;
  feedForward?: number;
  blocks?: number;
  contextLength?: number;
  seed?: number;
}

const GGUF_TYPE = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const GGML_TYPE_F32 = 0;
const ALIGNMENT = 32;

type MetaValue =
  | { type: 'u32'; value: number }
  | { type: 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'strings'; value: string[] }
  | { type: 'f32s'; value: number[] }
  | { type: 'i32s'; value: number[] };

class Writer {
  private chunks: Buffer[] = [];
  length = 0;
  push(buffer: Buffer): void {
    this.chunks.push(buffer);
    this.length += buffer.length;
  }
  u32(v: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.push(b);
  }
  i32(v: number) {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.push(b);
  }
  u64(v: number) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.push(b);
  }
  f32(v: number) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.push(b);
  }
  string(s: string) {
    const bytes = Buffer.from(s, 'utf8');
    this.u64(bytes.length);
    this.push(bytes);
  }
  pad(to: number) {
    const rest = this.length % to;
    if (rest) this.push(Buffer.alloc(to - rest));
  }
  buffer(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

function writeMeta(w: Writer, key: string, meta: MetaValue): void {
  w.string(key);
  switch (meta.type) {
    case 'u32':
      w.u32(GGUF_TYPE.UINT32);
      w.u32(meta.value);
      break;
    case 'f32':
      w.u32(GGUF_TYPE.FLOAT32);
      w.f32(meta.value);
      break;
    case 'bool':
      w.u32(GGUF_TYPE.BOOL);
      w.push(Buffer.from([meta.value ? 1 : 0]));
      break;
    case 'string':
      w.u32(GGUF_TYPE.STRING);
      w.string(meta.value);
      break;
    case 'strings':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.STRING);
      w.u64(meta.value.length);
      meta.value.forEach((s) => w.string(s));
      break;
    case 'f32s':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.FLOAT32);
      w.u64(meta.value.length);
      meta.value.forEach((v) => w.f32(v));
      break;
    case 'i32s':
      w.u32(GGUF_TYPE.ARRAY);
      w.u32(GGUF_TYPE.INT32);
      w.u64(meta.value.length);
      meta.value.forEach((v) => w.i32(v));
      break;
  }
}

/** SentencePiece-style vocabulary: <unk>, <s>, </s>, 256 byte tokens, then printable ASCII ("▁" for space). */
export function tinyVocabulary(): { tokens: string[]; scores: number[]; types: number[] } {
  const tokens = ['<unk>', '<s>', '</s>'];
  const types = [2, 3, 3];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(6);
  }
  for (let c = 32; c < 127; c++) {
    tokens.push(c === 32 ? '▁' : String.fromCharCode(c));
    types.push(1);
  }
  const scores = tokens.map((_, i) => (types[i] === 1 ? -1 - i / 1000 : 0));
  return { tokens, scores, types };
}

export function writeTinyGguf(path: string, options: TinyGgufOptions = {}): { path: string; vocabularySize: number; bytes: number } {
  const nEmbd = options.embedding ?? 64;
  const nHead = options.heads ?? 4;
  const nFf = options.feedForward ?? 128;
  const nBlocks = options.blocks ?? 1;
  const contextLength = options.contextLength ?? 4096;
  const random = createRng(options.seed ?? 1).next;
  const vocab = tinyVocabulary();
  const nVocab = vocab.tokens.length;

  const meta: Array<[string, MetaValue]> = [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'icabench-tiny-random' }],
    ['general.alignment', { type: 'u32', value: ALIGNMENT }],
    ['general.file_type', { type: 'u32', value: 0 }],
    ['llama.context_length', { type: 'u32', value: contextLength }],
    ['llama.embedding_length', { type: 'u32', value: nEmbd }],
    ['llama.block_count', { type: 'u32', value: nBlocks }],
    ['llama.feed_forward_length', { type: 'u32', value: nFf }],
    ['llama.attention.head_count', { type: 'u32', value: nHead }],
    ['llama.attention.head_count_kv', { type: 'u32', value: nHead }],
    ['llama.rope.dimension_count', { type: 'u32', value: nEmbd / nHead }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    ['llama.vocab_size', { type: 'u32', value: nVocab }],
    ['tokenizer.ggml.model', { type: 'string', value: 'llama' }],
    ['tokenizer.ggml.tokens', { type: 'strings', value: vocab.tokens }],
    ['tokenizer.ggml.scores', { type: 'f32s', value: vocab.scores }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: vocab.types }],
    ['tokenizer.ggml.unknown_token_id', { type: 'u32', value: 0 }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: 1 }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: 2 }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: true }],
    ['tokenizer.ggml.add_eos_token', { type: 'bool', value: false }],
  ];

  // ggml dimension order: ne[0] is the row length (input features)
  const tensors: Array<{ name: string; dims: number[]; fill: 'random' | 'ones' }> = [
    { name: 'token_embd.weight', dims: [nEmbd, nVocab], fill: 'random' },
    { name: 'output_norm.weight', dims: [nEmbd], fill: 'ones' },
    { name: 'output.weight', dims: [nEmbd, nVocab], fill: 'random' },
  ];
  for (let i = 0; i < nBlocks; i++) {
    tensors.push(
      { name: `blk.${i}.attn_norm.weight`, dims: [nEmbd], fill: 'ones' },
      { name: `blk.${i}.attn_q.weight`, dims: [nEmbd, nEmbd], fill: 'random' },
      { name: `blk.${i}.attn_k.weight`, dims: [nEmbd, nEmbd], fill: 'random' },
      { name: `blk.${i}.attn_v.weight`, dims: [nEmbd, nEmbd], fill: 'random' },
      { name: `blk.${i}.attn_output.weight`, dims: [nEmbd, nEmbd], fill: 'random' },
      { name: `blk.${i}.ffn_norm.weight`, dims: [nEmbd], fill: 'ones' },
      { name: `blk.${i}.ffn_gate.weight`, dims: [nEmbd, nFf], fill: 'random' },
      { name: `blk.${i}.ffn_up.weight`, dims: [nEmbd, nFf], fill: 'random' },
      { name: `blk.${i}.ffn_down.weight`, dims: [nFf, nEmbd], fill: 'random' },
    );
  }

  const w = new Writer();
  w.push(Buffer.from('GGUF', 'ascii'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(meta.length);
  for (const [key, value] of meta) writeMeta(w, key, value);
  let offset = 0;
  const sizes = tensors.map((t) => t.dims.reduce((a, b) => a * b, 1) * 4);
  tensors.forEach((t, i) => {
    w.string(t.name);
    w.u32(t.dims.length);
    t.dims.forEach((d) => w.u64(d));
    w.u32(GGML_TYPE_F32);
    w.u64(offset);
    offset += Math.ceil(sizes[i] / ALIGNMENT) * ALIGNMENT;
  });
  w.pad(ALIGNMENT);
  tensors.forEach((t, i) => {
    const data = Buffer.alloc(Math.ceil(sizes[i] / ALIGNMENT) * ALIGNMENT);
    const count = sizes[i] / 4;
    for (let j = 0; j < count; j++) data.writeFloatLE(t.fill === 'ones' ? 1 : (random() - 0.5) * 0.2, j * 4);
    w.push(data);
  });
  const buffer = w.buffer();
  writeFileSync(path, buffer);
  return { path, vocabularySize: nVocab, bytes: buffer.length };
}
