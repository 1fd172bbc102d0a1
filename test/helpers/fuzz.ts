import fc from 'fast-check';

/**
 * Values a hostile or buggy peer might send in place of a message: anything JSON can carry (deep,
 * wide, long strings, every Unicode plane, lone surrogates), binary parts, and near-valid messages
 * with one field broken. Deep nesting beyond what a client's own encoder can send goes as raw JSON
 * text (see sendRawEvent); here it stays within a few hundred levels.
 */
export function hostileValue(nearValid: readonly Record<string, unknown>[] = [], sizes: { maxStringChars: number; maxWide: number } = { maxStringChars: 300_000, maxWide: 70_000 }): fc.Arbitrary<unknown> {
  const text = fc.oneof(
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: fc.constantFrom('\ud800', '\udfff', '\u0000', '\u202e', '💥', 'é'), maxLength: 20 }),
    fc.nat({ max: sizes.maxStringChars }).map((n) => 'x'.repeat(n)),
  );
  const leaf = fc.oneof(text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.uint8Array({ maxLength: 2048 }));
  const deep = fc.tuple(fc.integer({ min: 1, max: 400 }), leaf).map(([depth, inner]) => {
    let value: unknown = inner;
    for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value };
    return value;
  });
  const wide = fc.integer({ min: 0, max: sizes.maxWide }).map((n) => Array.from({ length: n }, (_, i) => i));
  const anything = fc.anything({ maxDepth: 6, maxKeys: 8, withTypedArray: true, withNullPrototype: true, withSparseArray: true });
  const broken = nearValid.length
    ? fc.tuple(fc.constantFrom(...nearValid), fc.string({ maxLength: 12 }), fc.oneof(leaf, deep)).map(([valid, key, value]) => {
        const keys = Object.keys(valid);
        const field = keys.length && key.length % 2 ? keys[key.length % keys.length] : key;
        return { ...valid, [field]: value };
      })
    : fc.constant({});
  return fc.oneof(leaf, deep, wide, anything, broken);
}
