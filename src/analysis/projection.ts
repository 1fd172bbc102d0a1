/** A vector stored by its non-zero entries (TF-IDF vectors are mostly zeros; dense model vectors have all entries). */
export interface SparseVector {
  readonly indices: Int32Array;
  readonly values: Float64Array;
}

export function toSparse(vector: Float32Array): SparseVector {
  let nnz = 0;
  for (let i = 0; i < vector.length; i++) if (vector[i] !== 0) nnz++;
  const indices = new Int32Array(nnz);
  const values = new Float64Array(nnz);
  for (let i = 0, k = 0; i < vector.length; i++) {
    if (vector[i] !== 0) {
      indices[k] = i;
      values[k++] = vector[i];
    }
  }
  return { indices, values };
}

function dotDense(row: SparseVector, v: Float64Array): number {
  let sum = 0;
  for (let k = 0; k < row.indices.length; k++) sum += row.values[k] * v[row.indices[k]];
  return sum;
}

function normalise(v: Float64Array): void {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i] * v[i];
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < v.length; i++) v[i] /= norm;
}

/**
 * The first two principal components of the rows (PCA on the centred data) by power iteration
 * with deflation, on the sparse rows (centring is applied implicitly, so sparse rows stay sparse):
 * returns each row's coordinates on them. Deterministic: a fixed start vector and a sign convention
 * (the largest-magnitude loading of each component is positive), so the same data gives the same plot.
 */
export function pcaProjection(rows: readonly SparseVector[], dimensions: number, iterations = 100): { x: number; y: number }[] {
  const n = rows.length;
  if (n === 0) return [];
  const mean = new Float64Array(dimensions);
  for (const row of rows) for (let k = 0; k < row.indices.length; k++) mean[row.indices[k]] += row.values[k] / n;
  /** C·v with C the covariance of the centred rows (up to the factor 1/n) */
  const covarianceTimes = (v: Float64Array): Float64Array => {
    const meanDotV = mean.reduce((s, m, i) => s + m * v[i], 0);
    const out = new Float64Array(dimensions);
    let uSum = 0;
    for (const row of rows) {
      const u = dotDense(row, v) - meanDotV;
      uSum += u;
      for (let k = 0; k < row.indices.length; k++) out[row.indices[k]] += row.values[k] * u;
    }
    for (let i = 0; i < dimensions; i++) out[i] -= mean[i] * uSum;
    return out;
  };
  const components: Float64Array[] = [];
  for (let c = 0; c < 2; c++) {
    let v: Float64Array = Float64Array.from({ length: dimensions }, (_, i) => 1 + ((i * 7919 + c * 104729) % 97) / 97);
    const orthogonalise = (w: Float64Array) => {
      for (const p of components) {
        const d = p.reduce((s, x, i) => s + x * w[i], 0);
        for (let i = 0; i < dimensions; i++) w[i] -= d * p[i];
      }
    };
    orthogonalise(v);
    normalise(v);
    for (let it = 0; it < iterations; it++) {
      const w = covarianceTimes(v);
      orthogonalise(w);
      normalise(w);
      v = w;
    }
    let largest = 0;
    for (let i = 0; i < dimensions; i++) if (Math.abs(v[i]) > Math.abs(v[largest])) largest = i;
    if (v[largest] < 0) for (let i = 0; i < dimensions; i++) v[i] = -v[i];
    components.push(v);
  }
  const offsets = components.map((p) => mean.reduce((s, m, i) => s + m * p[i], 0));
  return rows.map((row) => ({ x: dotDense(row, components[0]) - offsets[0], y: dotDense(row, components[1]) - offsets[1] }));
}
