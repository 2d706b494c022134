// Small GEMMs of the generated WGSL on Dawn's OpenGL backend (Mesa's
// llvmpipe here) against the float64 reference, with the design's bounds
// relative to max|ref|: float32 1e-5, float16 2e-3, bfloat16 8e-3.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { activations, operand, problem, random, reference, run, span } from './gemm.js';
import { openDevice, pipeline } from './gpu.js';
import { generate, tile } from './kernels.js';

const bounds = { f32: 1e-5, f16: 2e-3, bf16: 8e-3 };

/** The standalone epilogue kernels' float64 results on the C array given (changed in place). */
const standalone = {
  bias: (g, C, bias) => eachOfC(g, C, (x, j) => x + bias[j]),
  activate: (g, C) => eachOfC(g, C, (x) => activations[g.act](x)),
};
function eachOfC(g, C, f) {
  for (let b = 0; b < g.batch; b++) for (let i = 0; i < g.M; i++) for (let j = 0; j < g.N; j++) {
    const ci = g.offC + b * g.strideC + i * g.ldc + j;
    C[ci] = f(C[ci], j);
  }
  return C;
}
let device;
before(async () => { device = await openDevice('opengl'); });
after(() => device?.destroy());

const cache = new Map();
async function kernel(options) {
  const key = JSON.stringify(options);
  if (!cache.has(key)) {
    const wgsl = generate(options);
    cache.set(key, { wgsl, pipe: await pipeline(device, wgsl), params: options.params, kernel: options.kernel });
  }
  return cache.get(key);
}

/**
 * Runs problem g (dtype, params and the problem's fields) and checks every
 * element of C against the reference, and that nothing outside C changed.
 * Returns C's buffer.
 */
async function check(spec, { cFill = null, split = null, elementwise = null } = {}) {
  const { dtype = 'f32', params = tile(), ...fields } = spec;
  const g = problem(fields);
  const rnd = random(g.M * 7919 + g.N * 104729 + g.K * 31 + g.offA);
  const A = operand(dtype, span(g.offA, g.strideA, g.batch, g.transA ? g.K : g.M, g.lda, g.transA ? g.M : g.K), rnd);
  const B = operand(dtype, span(g.offB, g.strideB, g.batch, g.transB ? g.N : g.K, g.ldb, g.transB ? g.K : g.N), rnd);
  const cLen = span(g.offC, g.strideC, g.batch, g.M, g.ldc, g.N);
  const c = new Float32Array(cLen).map(() => cFill ?? rnd() * 2 - 1);
  const bias = new Float32Array(Math.max(1, g.N)).map(() => rnd() * 2 - 1);
  const opts = { params, dtype, transA: g.transA, transB: g.transB };
  const kernels = elementwise ? { elementwise: await kernel({ kernel: elementwise }) }
    : split ? { planes: await kernel({ ...opts, kernel: 'planes' }), reduce: await kernel({ kernel: 'reduce' }), ...split }
      : { gemm: await kernel(opts) };
  const got = await run(device, kernels, g, A.words, B.words, c, bias);
  const want = standalone[elementwise]?.(g, Float64Array.from(c), bias)
    ?? reference(g, A.values, B.values, Float64Array.from(c), Float64Array.from(bias));
  const inC = new Uint8Array(cLen);
  for (let b = 0; b < g.batch; b++) for (let i = 0; i < g.M; i++) inC.fill(1, g.offC + b * g.strideC + i * g.ldc, g.offC + b * g.strideC + i * g.ldc + g.N);
  let maxRef = 0, maxErr = 0;
  for (let e = 0; e < cLen; e++) {
    if (!inC[e]) {
      assert.ok(Object.is(got[e], c[e]), `element ${e} outside C changed: ${c[e]} -> ${got[e]}`);
      continue;
    }
    assert.ok(Number.isFinite(got[e]), `C element ${e} is ${got[e]}`);
    maxRef = Math.max(maxRef, Math.abs(want[e]));
    maxErr = Math.max(maxErr, Math.abs(got[e] - want[e]));
  }
  assert.ok(maxErr <= bounds[dtype] * maxRef, `${dtype} ${g.M}x${g.N}x${g.K}: max error ${maxErr} > ${bounds[dtype]} * ${maxRef}`);
  return got;
}

const staged = tile();
const direct = tile({ load: 'direct', acc: 'chain', pad: 0 });

for (const dtype of ['f32', 'f16', 'bf16']) {
  for (const transA of [false, true]) for (const transB of [false, true]) {
    test(`${dtype} op(A)${transA ? '^T' : ''} op(B)${transB ? '^T' : ''}: staged blocked and direct chain, ragged, ld larger, offsets, batch, alpha, beta`, async () => {
      const shape = { M: 65, N: 63, K: 130, batch: 2, alpha: 1.5, beta: -0.5, offA: 3, offB: 5, offC: 7, transA, transB, dtype };
      await check({ ...shape, params: staged, lda: (transA ? 65 : 130) + 3, ldb: (transB ? 130 : 63) + 2, ldc: 70 });
      await check({ ...shape, params: direct, M: 64, N: 7, K: 63 });
    });
  }
}

test('ragged sizes 1, 7, 63, 64, 65, 130 (float32, both loads)', async () => {
  const sizes = [1, 7, 63, 64, 65, 130];
  for (const [n, s] of sizes.entries()) {
    const M = s, N = sizes[(n + 2) % 6], K = sizes[(n + 4) % 6];
    await check({ M, N, K, params: staged });
    await check({ M: N, N: K, K: M, params: direct });
  }
});

test('beta = 0 never reads C: NaN in C stays out of the result', async () => {
  for (const params of [staged, direct]) {
    await check({ M: 33, N: 40, K: 17, alpha: 2, params }, { cFill: NaN });
    await check({ M: 64, N: 64, K: 32, params }, { cFill: NaN }); // whole tiles: the direct store
  }
});

test('K = 0: C = beta * C, or 0 with beta = 0', async () => {
  await check({ M: 9, N: 33, K: 0, beta: 0.75, params: staged });
  const c = await check({ M: 9, N: 33, K: 0, params: direct }, { cFill: NaN });
  assert.ok(c.every((x) => x === 0));
});

test('epilogue: bias, ReLU, GELU (erf and tanh), after alpha and beta', async () => {
  for (const act of [0, 1, 2, 3]) {
    await check({ M: 37, N: 45, K: 50, alpha: 0.5, beta: 0.25, bias: true, act, params: act % 2 ? staged : direct });
  }
});

test('split-k: planes of 64-term ranges and their reduction (float32, float16, epilogue)', async () => {
  for (const dtype of ['f32', 'f16']) {
    const split = { ranges: 3, rangeLen: 64 };
    await check({ dtype, M: 40, N: 70, K: 150, alpha: 1.25, beta: 0.5, batch: 2, offA: 1, params: staged }, { split });
    await check({ dtype, M: 40, N: 70, K: 150, bias: true, act: 1, transA: true, transB: true, params: direct }, { split });
  }
});

const fewrows = (cols, slices) => ({ variant: 'fewrows', cols, slices, vec: 1 });

test('few rows: M 1 to 4, B K x N and N x K, ragged N and K, ld larger, offsets, alpha, beta', async () => {
  for (const transB of [false, true]) for (const M of [1, 2, 3, 4]) {
    const params = transB ? fewrows(8, 32) : fewrows(16, 16);
    for (const [N, K] of [[1, 1], [7, 63], [65, 130], [130, 7], [64, 300]]) {
      await check({ M, N, K, transB, alpha: 1.25, beta: -0.5, params });
    }
    await check({ M, N: 63, K: 65, transB, offA: 3, offB: 5, offC: 2, lda: 70, ldb: transB ? 68 : 66, ldc: 64, params });
  }
});

test('few rows: batches with stride_b = 0, beta = 0 with NaN in C, the epilogue', async () => {
  for (const transB of [false, true]) {
    const params = transB ? fewrows(4, 64) : fewrows(32, 8);
    await check({ M: 3, N: 45, K: 77, batch: 3, strideB: 0, transB, params });
    await check({ M: 4, N: 40, K: 33, alpha: 2, transB, params }, { cFill: NaN });
    for (const act of [1, 2, 3]) await check({ M: 2, N: 37, K: 50, beta: 0.5, bias: true, act, transB, params });
  }
});

const decode = (rows, cols, slices, tn = 1) => ({ variant: 'decode', rows, cols, slices, tn, vec: 1 });

// A kernel each (ROWS the power of two covering M): float16 at every M of
// the models' layout (B N x K), the others at a few, each compiled once.
const decodeCases = [
  ...[1, 2, 3, 8, 16].map((M) => ({ dtype: 'f16', M, transB: true })),
  ...[1, 3, 8].map((M) => ({ dtype: 'f16', M, transB: false })),
  ...[false, true].flatMap((transB) => [{ dtype: 'bf16', M: 2, transB }, { dtype: 'f32', M: 8, transB }]),
];

test('decode kernel: M 1, 2, 3, 8, 16 of float16 (bfloat16 at 2, float32 at 8), B N x K and K x N, ragged N and K, ld larger, offsets, alpha, beta', async () => {
  for (const { dtype, M, transB } of decodeCases) {
    // The defaults' shapes (og_params_decode).
    const rows = Math.min(16, 2 ** Math.ceil(Math.log2(M)));
    const params = transB ? decode(rows, 4, 32) : decode(rows, 64, 4);
    for (const [N, K] of [[1, 1], [7, 63], [65, 130], [9, 8]]) {
      await check({ dtype, M, N, K, transB, alpha: 1.25, beta: -0.5, params });
    }
    await check({ dtype, M, N: 70, K: 77, transB, offA: 3, offB: 5, offC: 2, lda: 80, ldb: transB ? 78 : 72, ldc: 71, params });
  }
});

test('decode kernel: several columns an invocation, batches with stride_b = 0, beta = 0 with NaN in C, the epilogue, rows past M', async () => {
  for (const transB of [false, true]) {
    await check({ dtype: 'f16', M: 8, N: 70, K: 77, transB, offA: 1, params: transB ? decode(8, 16, 8, 4) : decode(8, 64, 4, 8) });
    await check({ dtype: 'f16', M: 3, N: 45, K: 77, batch: 3, strideB: 0, transB, params: decode(4, 8, 16) });
    await check({ dtype: 'bf16', M: 5, N: 40, K: 33, alpha: 2, transB, params: decode(8, 4, 32) }, { cFill: NaN });
    for (const act of [1, 2, 3]) await check({ dtype: 'f16', M: 2, N: 37, K: 50, beta: 0.5, bias: true, act, transB, params: decode(2, 8, 8) });
  }
});

test('alpha = 0 or K = 0: C = act(beta * C + bias) by the scale kernel, C unread when beta = 0', async () => {
  await check({ M: 9, N: 70, K: 5, alpha: 0, beta: 0.75, batch: 2, ldc: 72, offC: 3 }, { elementwise: 'scale' });
  await check({ M: 5, N: 33, K: 0, beta: -2, bias: true, act: 1 }, { elementwise: 'scale' });
  const c = await check({ M: 7, N: 20, K: 0, bias: true, act: 2 }, { cFill: NaN, elementwise: 'scale' });
  assert.ok(c.slice(0, 7 * 20).every(Number.isFinite));
});

test('the standalone bias and activation kernels', async () => {
  await check({ M: 13, N: 90, K: 1, bias: true, batch: 2, ldc: 95, offC: 1 }, { elementwise: 'bias' });
  for (const act of [1, 2, 3]) await check({ M: 6, N: 65, K: 1, act }, { elementwise: 'activate' });
});
