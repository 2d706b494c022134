// The WebGPU runtime (web/onegpu) on Dawn's OpenGL backend (Mesa's llvmpipe
// here): the float GEMM's correctness suite in miniature against the
// float64 reference with the design's bounds relative to max|ref| (float32
// 1e-5, float16 2e-3, bfloat16 8e-3), elements of C's buffer outside C
// unchanged; Deterministic mode bit for bit against the documented order
// (ordered.js, fused or not as the device's probe says); every refused call
// refused with onegpu.h's message and nothing written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createGemm, probeFma } from '../onegpu/onegpu.js';
import { splitRanges } from '../onegpu/rules.js';
import { reference } from './gemm.js';
import { openDevice } from './gpu.js';
import { referenceOrdered } from './ordered.js';
import { buffer, inC, operands, read, release } from './runtime.js';

const bounds = { f32: 1e-5, f16: 2e-3, bf16: 8e-3 };
let device, fma;
const gemms = {};
before(async () => {
  device = await openDevice('opengl');
  fma = await probeFma(device);
  for (const dtype of ['f32', 'f16', 'bf16']) for (const mode of ['fast', 'deterministic']) gemms[`${dtype} ${mode}`] = createGemm(device, { dtype, mode });
});
after(() => device?.destroy());

/**
 * Runs spec through the runtime (dtype, mode, gemm.js's problem fields,
 * cFill, biasOffset) and checks C against the float64 reference and the
 * elements outside C; returns {got, o} (C's whole buffer, the operands).
 */
async function check(spec, { gemm = gemms[`${spec.dtype ?? 'f32'} ${spec.mode ?? 'fast'}`] } = {}) {
  const { mode, ...fields } = spec;
  const o = operands(device, fields);
  await gemm.run(o.args);
  const got = await read(device, o.buffers.c, o.c.length);
  const want = reference(o.g, o.A, o.B, Float64Array.from(o.c), Float64Array.from(o.bias));
  let maxRef = 0, maxErr = 0;
  for (let e = 0; e < o.c.length; e++) {
    if (!inC(o.g, e)) {
      assert.ok(Object.is(got[e], o.c[e]), `element ${e} outside C changed: ${o.c[e]} -> ${got[e]}`);
      continue;
    }
    assert.ok(Number.isFinite(got[e]), `C element ${e} is ${got[e]}`);
    maxRef = Math.max(maxRef, Math.abs(want[e]));
    maxErr = Math.max(maxErr, Math.abs(got[e] - want[e]));
  }
  const dtype = spec.dtype ?? 'f32';
  assert.ok(maxErr <= bounds[dtype] * maxRef, `${dtype} ${o.g.M}x${o.g.N}x${o.g.K}: max error ${maxErr} > ${bounds[dtype]} * ${maxRef}`);
  release(o);
  return { got, o };
}

for (const dtype of ['f32', 'f16', 'bf16']) {
  test(`${dtype}, every op(A) x op(B): ragged, ld larger, odd offsets, batch with stride_b = 0, alpha, beta, split-k and not`, async () => {
    for (const transA of [false, true]) for (const transB of [false, true]) {
      const shape = { dtype, M: 65, N: 63, K: 130, batch: 2, alpha: 1.5, beta: -0.5, offA: 3, offB: 5, offC: 7, transA, transB };
      await check({ ...shape, lda: (transA ? 65 : 130) + 3, ldb: (transB ? 130 : 63) + 2, ldc: 70, strideB: 0 });
      await check({ ...shape, M: 64, N: 7, K: 63, offA: 1, offB: 0 });
    }
  });
}

test('ragged sizes 1, 7, 63, 64, 65, 130 in M, N and K (float32 and float16)', async () => {
  const sizes = [1, 7, 63, 64, 65, 130];
  for (const [n, s] of sizes.entries()) {
    await check({ M: s, N: sizes[(n + 2) % 6], K: sizes[(n + 4) % 6] });
    await check({ dtype: 'f16', M: sizes[(n + 1) % 6], N: s, K: sizes[(n + 3) % 6], transB: true });
  }
});

test('beta = 0 never reads C: NaN in C is overwritten (tile and split-k)', async () => {
  await check({ M: 33, N: 40, K: 17, alpha: 2, cFill: NaN });
  await check({ M: 64, N: 64, K: 32, cFill: NaN });
  await check({ M: 20, N: 30, K: 300, cFill: NaN }); // split-k: the reduction skips C too
});

test('the epilogue: bias (with an offset) and each activation, after alpha and beta, split and not', async () => {
  for (const act of [0, 1, 2, 3]) {
    await check({ M: 37, N: 45, K: 50, alpha: 0.5, beta: 0.25, bias: true, biasOffset: 3, act });
    await check({ dtype: 'bf16', M: 30, N: 45, K: 200, bias: true, act, transA: true });
  }
});

test('split-k follows the documented rule', () => {
  // docs/accumulation-order.md: min(16, ceil(384 / workgroups)) ranges of a multiple of 32, at least 64.
  assert.deepEqual(splitRanges('rule', 64, 64, 1024, 1, 1 << 22), { ranges: 16, rangeLen: 64 });
  assert.deepEqual(splitRanges('rule', 65, 63, 130, 2, 1 << 22), { ranges: 3, rangeLen: 64 });
  assert.deepEqual(splitRanges('rule', 512, 512, 4096, 6, 1 << 22), { ranges: 1, rangeLen: 4096 }); // 384 workgroups
  assert.deepEqual(splitRanges('rule', 64, 64, 127, 1, 1 << 22), { ranges: 1, rangeLen: 127 }); // K < 128
  assert.deepEqual(splitRanges('rule', 100, 200, 5000, 1, 1 << 22), { ranges: 16, rangeLen: 320 });
  assert.deepEqual(splitRanges(16, 64, 64, 129, 1, 1 << 22), { ranges: 15, rangeLen: 9 });
  assert.deepEqual(splitRanges('rule', 1024, 1024, 8192, 1, 1 << 22), { ranges: 2, rangeLen: 4096 });
  assert.deepEqual(splitRanges('rule', 512, 512, 8192, 1, 1 << 22), { ranges: 6, rangeLen: 1376 });
  // A scratch of 4 planes: fewer, longer ranges; of less than 2: no split.
  assert.deepEqual(splitRanges('rule', 64, 64, 4096, 1, 4 * 4096), { ranges: 4, rangeLen: 1024 });
  assert.deepEqual(splitRanges('rule', 64, 64, 4096, 1, 2 * 4096 - 1), { ranges: 1, rangeLen: 4096 });
  const g = gemms['f32 fast'];
  const args = (m, n, k) => ({ m, n, k, lda: k, ldb: n, ldc: n, a: device.createBuffer({ size: 4 * m * k, usage: GPUBufferUsage.STORAGE }), b: device.createBuffer({ size: 4 * k * n, usage: GPUBufferUsage.STORAGE }), c: device.createBuffer({ size: 4 * m * n, usage: GPUBufferUsage.STORAGE }), alpha: 1 });
  assert.match(g.describe(args(64, 64, 1024)), /\(default\); 16 k ranges of 64$/);
  assert.match(g.describe(args(64, 64, 64)), /\(default\)$/);
});
