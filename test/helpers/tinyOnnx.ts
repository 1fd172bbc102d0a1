import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';

/**
 * Generates a tiny ONNX sentence encoder with MiniLM's interface (inputs input_ids,
 * attention_mask, token_type_ids, int64 [batch, tokens]; output last_hidden_state, float
 * [batch, tokens, dims]) plus a BERT WordPiece tokenizer folder in the Hugging Face layout, so the
 * real ONNX path (transformers.js tokenizer, onnxruntime-node, pooling) runs without model weights.
 * The graph: last_hidden_state = E[input_ids] + T[token_type_ids] + 0·attention_mask, so a test can
 * compute the expected pooled vectors by hand.
 */

// the part of onnx.proto (ONNX IR) the graph needs, field numbers as in the official schema
const ONNX_SCHEMA = {
  nested: {
    onnx: {
      nested: {
        ModelProto: { fields: { irVersion: { type: 'int64', id: 1 }, opsetImport: { rule: 'repeated', type: 'OperatorSetIdProto', id: 8 }, producerName: { type: 'string', id: 2 }, graph: { type: 'GraphProto', id: 7 } } },
        OperatorSetIdProto: { fields: { domain: { type: 'string', id: 1 }, version: { type: 'int64', id: 2 } } },
        GraphProto: {
          fields: {
            node: { rule: 'repeated', type: 'NodeProto', id: 1 },
            name: { type: 'string', id: 2 },
            initializer: { rule: 'repeated', type: 'TensorProto', id: 5 },
            input: { rule: 'repeated', type: 'ValueInfoProto', id: 11 },
            output: { rule: 'repeated', type: 'ValueInfoProto', id: 12 },
          },
        },
        NodeProto: { fields: { input: { rule: 'repeated', type: 'string', id: 1 }, output: { rule: 'repeated', type: 'string', id: 2 }, name: { type: 'string', id: 3 }, opType: { type: 'string', id: 4 }, attribute: { rule: 'repeated', type: 'AttributeProto', id: 5 } } },
        AttributeProto: { fields: { name: { type: 'string', id: 1 }, i: { type: 'int64', id: 3 }, ints: { rule: 'repeated', type: 'int64', id: 8 }, type: { type: 'int32', id: 20 } } },
        TensorProto: { fields: { dims: { rule: 'repeated', type: 'int64', id: 1 }, dataType: { type: 'int32', id: 2 }, floatData: { rule: 'repeated', type: 'float', id: 4 }, int64Data: { rule: 'repeated', type: 'int64', id: 7 }, name: { type: 'string', id: 8 } } },
        ValueInfoProto: { fields: { name: { type: 'string', id: 1 }, type: { type: 'TypeProto', id: 2 } } },
        TypeProto: { fields: { tensorType: { type: 'TensorTypeProto', id: 1 } } },
        TensorTypeProto: { fields: { elemType: { type: 'int32', id: 1 }, shape: { type: 'TensorShapeProto', id: 2 } } },
        TensorShapeProto: { fields: { dim: { rule: 'repeated', type: 'Dimension', id: 1 } } },
        Dimension: { oneofs: { value: { oneof: ['dimValue', 'dimParam'] } }, fields: { dimValue: { type: 'int64', id: 1 }, dimParam: { type: 'string', id: 2 } } },
      },
    },
  },
};

const FLOAT = 1;
const INT64 = 7;
const ATTR_INT = 2;

export const TINY_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'radar', 'sensor', 'is', 'dirty', 'wash', 'car', 'warning', 'brake', 'lights', 'on', '##s', 'clean'];

export interface TinyModel {
  dir: string;
  /** E: one row per vocabulary id */
  wordEmbeddings: number[][];
  /** T: rows for token type 0 and 1 */
  typeEmbeddings: number[][];
  vocab: string[];
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>) {
  return { name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } } };
}

/** Writes model folder `dir` (tokenizer.json, tokenizer_config.json, onnx/model.onnx) and returns the weights used. */
export function writeTinySentenceModel(dir: string, dims = 4): TinyModel {
  const vocab = TINY_VOCAB;
  // fixed, distinct, irregular values so that a pooling mistake shows
  const wordEmbeddings = vocab.map((_, v) => Array.from({ length: dims }, (_, d) => Math.fround(Math.sin(v * 1.7 + d * 0.9) * (1 + (v % 3)) + 0.05 * d)));
  const typeEmbeddings = [0, 1].map((t) => Array.from({ length: dims }, (_, d) => Math.fround(0.25 * (t + 1) * (d % 2 === 0 ? 1 : -1))));
  const root = protobuf.Root.fromJSON(ONNX_SCHEMA);
  const Model = root.lookupType('onnx.ModelProto');
  const model = {
    irVersion: 8,
    producerName: 'icabench-test',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'tiny-sentence-encoder',
      initializer: [
        { name: 'word_embeddings', dataType: FLOAT, dims: [vocab.length, dims], floatData: wordEmbeddings.flat() },
        { name: 'type_embeddings', dataType: FLOAT, dims: [2, dims], floatData: typeEmbeddings.flat() },
        { name: 'zero', dataType: FLOAT, dims: [1], floatData: [0] },
        { name: 'axes', dataType: INT64, dims: [1], int64Data: [2] },
      ],
      node: [
        { opType: 'Gather', name: 'words', input: ['word_embeddings', 'input_ids'], output: ['we'], attribute: [{ name: 'axis', i: 0, type: ATTR_INT }] },
        { opType: 'Gather', name: 'types', input: ['type_embeddings', 'token_type_ids'], output: ['te'], attribute: [{ name: 'axis', i: 0, type: ATTR_INT }] },
        { opType: 'Add', name: 'sum', input: ['we', 'te'], output: ['summed'] },
        { opType: 'Cast', name: 'mask_float', input: ['attention_mask'], output: ['mask_f'], attribute: [{ name: 'to', i: FLOAT, type: ATTR_INT }] },
        { opType: 'Unsqueeze', name: 'mask_3d', input: ['mask_f', 'axes'], output: ['mask_u'] },
        { opType: 'Mul', name: 'mask_zero', input: ['mask_u', 'zero'], output: ['mask_z'] },
        { opType: 'Add', name: 'out', input: ['summed', 'mask_z'], output: ['last_hidden_state'] },
      ],
      input: [valueInfo('input_ids', INT64, ['batch', 'tokens']), valueInfo('attention_mask', INT64, ['batch', 'tokens']), valueInfo('token_type_ids', INT64, ['batch', 'tokens'])],
      output: [valueInfo('last_hidden_state', FLOAT, ['batch', 'tokens', dims])],
    },
  };
  const problem = Model.verify(model);
  if (problem) throw new Error(`tiny onnx model: ${problem}`);
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  writeFileSync(join(dir, 'onnx', 'model.onnx'), Model.encode(Model.fromObject(model)).finish());

  const special = (id: number) => ({ id, content: vocab[id], single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [0, 1, 2, 3, 4].map(special),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(vocab.map((t, i) => [t, i])) },
  };
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(
    join(dir, 'tokenizer_config.json'),
    JSON.stringify({ tokenizer_class: 'BertTokenizer', do_lower_case: true, model_max_length: 512, pad_token: '[PAD]', unk_token: '[UNK]', cls_token: '[CLS]', sep_token: '[SEP]', mask_token: '[MASK]', clean_up_tokenization_spaces: true }),
  );
  writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'bert', hidden_size: dims, vocab_size: vocab.length }));
  return { dir, wordEmbeddings, typeEmbeddings, vocab };
}
