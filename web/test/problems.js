// Problems of the GEMM tests and their float64 reference, with nothing of
// Node.js, so that the browser page (web/browser/) shares them:
// C = act(alpha * op(A) * op(B) + beta * C + bias), row-major, sizes and
// offsets in elements; float16 and bfloat16 operands are pairs in u32 words.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x) => { f32[0] = x; return u32[0]; };
const floatOf = (bits) => { u32[0] = bits; return f32[0]; };

/** A deterministic generator of numbers in [0, 1) (mulberry32). */
export function random(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The value of a float16's bits. */
function half(bits) {
  const e = (bits >> 10) & 31, m = bits & 1023, s = bits & 0x8000 ? -1 : 1;
  return s * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
}

/**
 * `count` elements of dtype, random in about [-1, 1]: their values (float64,
 * exactly what the kernel reads) and the u32 words holding them.
 */
export function operand(dtype, count, rnd) {
  const values = new Float64Array(count);
  const words = new Uint32Array(Math.max(1, dtype === 'f32' ? count : Math.ceil(count / 2)));
  for (let i = 0; i < count; i++) {
    if (dtype === 'f32') {
      words[i] = bitsOf(rnd() * 2 - 1);
      values[i] = floatOf(words[i]);
      continue;
    }
    let h;
    if (dtype === 'f16') {
      h = (rnd() < 0.5 ? 0x8000 : 0) | ((11 + Math.floor(rnd() * 4)) << 10) | Math.floor(rnd() * 1024);
      values[i] = half(h);
    } else {
      h = bitsOf(rnd() * 2 - 1) >>> 16;
      values[i] = floatOf(h << 16);
    }
    words[i >> 1] |= h << (16 * (i & 1));
  }
  return { values, words };
}

const erfc = (z) => { // Numerical Recipes 6.2, fractional error below 1.2e-7
  const t = 1 / (1 + 0.5 * Math.abs(z));
  const p = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
    -1.13520398, 1.48851587, -0.82215223, 0.17087277].reduceRight((acc, c) => c + t * acc, 0);
  const r = t * Math.exp(-z * z + p);
  return z >= 0 ? r : 2 - r;
};
/** The activations of pc.epi bits 0-1, in float64. */
export const activations = [
  (x) => x,
  (x) => (x < 0 ? 0 : x),
  (x) => 0.5 * x * erfc(-x / Math.SQRT2),
  (x) => 0.5 * x * (1 + Math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
];

/** Element (b, i, k) of op(A) and (b, k, j) of op(B) for a problem g. */
export const opA = (g, A, b, i, k) => A[g.offA + b * g.strideA + (g.transA ? k * g.lda + i : i * g.lda + k)];
export const opB = (g, B, b, k, j) => B[g.offB + b * g.strideB + (g.transB ? j * g.ldb + k : k * g.ldb + j)];

/** The float64 reference of every element of C (the C array given, changed in place). */
export function reference(g, A, B, C, bias) {
  for (let b = 0; b < g.batch; b++) for (let i = 0; i < g.M; i++) for (let j = 0; j < g.N; j++) {
    let sum = 0;
    for (let k = 0; k < g.K; k++) sum += opA(g, A, b, i, k) * opB(g, B, b, k, j);
    const ci = g.offC + b * g.strideC + i * g.ldc + j;
    let r = g.alpha * sum + (g.beta !== 0 ? g.beta * C[ci] : 0);
    if (g.bias) r += bias[j];
    C[ci] = activations[g.act ?? 0](r);
  }
  return C;
}

/** A problem with its defaults filled in: tight leading dimensions, no offsets. */
export function problem(g) {
  const p = { batch: 1, alpha: 1, beta: 0, transA: false, transB: false, offA: 0, offB: 0, offC: 0, act: 0, bias: false, ...g };
  p.lda ??= p.transA ? p.M : p.K;
  p.ldb ??= p.transB ? p.K : p.N;
  p.ldc ??= p.N;
  p.strideA ??= (p.transA ? p.K : p.M) * p.lda;
  p.strideB ??= (p.transB ? p.N : p.K) * p.ldb;
  p.strideC ??= p.M * p.ldc;
  return p;
}

/** Elements an operand of `rows` rows spans: offset, batches, leading dimension. */
export const span = (off, stride, batch, rows, ld, cols) => off + (batch - 1) * stride + Math.max(0, rows - 1) * ld + cols;
