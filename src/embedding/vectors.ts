/** Scales a vector to unit length in place (a zero vector stays zero). */
export function normaliseL2(vector: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i] * vector[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] /= norm;
  return vector;
}

/** Cosine similarity; for unit vectors, the dot product. */
export function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`cosine: vectors of different length (${a.length} vs ${b.length})`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * Mean pooling as sentence-transformers does it: the average of the token vectors whose
 * attention mask is 1 (padding excluded), then L2 normalisation.
 * @param hidden last_hidden_state, row-major [batch, tokens, dims]
 */
export function meanPool(hidden: Float32Array, mask: ArrayLike<number | bigint>, batch: number, tokens: number, dims: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const vector = new Float32Array(dims);
    let count = 0;
    for (let t = 0; t < tokens; t++) {
      if (Number(mask[b * tokens + t]) === 0) continue;
      count++;
      const offset = (b * tokens + t) * dims;
      for (let d = 0; d < dims; d++) vector[d] += hidden[offset + d];
    }
    // sentence-transformers clamps the count at 1e-9 so an all-padding row gives a zero vector
    const divisor = Math.max(count, 1e-9);
    for (let d = 0; d < dims; d++) vector[d] /= divisor;
    out.push(normaliseL2(vector));
  }
  return out;
}
