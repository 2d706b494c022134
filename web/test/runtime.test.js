// The WebGPU runtime (web/onegpu as the build writes it: module.js) on
// Dawn's OpenGL backend (Mesa's llvmpipe here): the float GEMM's
// correctness suite in miniature against the float64 reference with the
// design's bounds relative to max|ref| (float32 1e-5, float16 2e-3,
// bfloat16 8e-3), elements of C's buffer outside C unchanged;
// Deterministic mode bit for bit against the documented order (ordered.js,
// fused or not as the device's probe says); every refused call refused with
// onegpu.h's message and nothing written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Elementwise, createGemm, probeFma, splitRanges } from './module.js';
import { reference } from './problems.js';
import { openDevice } from './gpu.js';
import { fmaf, referenceOrdered } from './ordered.js';
import { buffer, operands, read, release, runCase } from './runtime.js';

let device, fma;
const gemms = {};
before(async () => {
  device = await openDevice('opengl');
  fma = await probeFma(device);
  for (const dtype of ['f32', 'f16', 'bf16']) for (const mode of ['fast', 'deterministic']) gemms[`${dtype} ${mode}`] = createGemm(device, { dtype, mode });
});
after(() => device?.destroy());

/** Runs spec with its type's and mode's object and asserts runCase's findings; returns them. */
async function check(spec, { gemm = gemms[`${spec.dtype ?? 'f32'} ${spec.mode ?? 'fast'}`] } = {}) {
  const { mode, ...fields } = spec;
  const r = await runCase(device, gemm, fields);
  assert.deepEqual(r.outside, []);
  assert.deepEqual(r.nonFinite, []);
  assert.ok(r.maxErr <= r.bound * r.maxRef, `${fields.dtype ?? 'f32'} ${r.o.g.M}x${r.o.g.N}x${r.o.g.K}: max error ${r.maxErr} > ${r.bound} * ${r.maxRef}`);
  return r;
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

test('offsets past minStorageBufferOffsetAlignment: operands bound from an aligned start, the rest as element offsets', async () => {
  for (const dtype of ['f32', 'f16', 'bf16']) {
    await check({ dtype, M: 20, N: 33, K: 40, offA: 1001, offB: 523, offC: 300, bias: true, biasOffset: 70, beta: 1 });
    await check({ dtype, M: 20, N: 33, K: 200, offA: 777, offB: 1025, offC: 65, batch: 2, transA: true }); // split-k
  }
});

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

test('the host fma rounds once: exact products, ties to even, and double sums that land on a float32 midpoint', () => {
  const x = Math.fround(1 + 2 ** -12); // x * x = 1 + 2^-11 + 2^-24: halfway between two float32 values
  assert.equal(fmaf(x, x, Math.fround(-(1 + 2 ** -11))), 2 ** -24); // two roundings give 0
  assert.equal(fmaf(x, x, 0), Math.fround(1 + 2 ** -11)); // a tie: to even
  // The double sum rounds back onto the midpoint; the exact sum lies above or below it.
  assert.equal(fmaf(x, x, 2 ** -80), 1 + 2 ** -11 + 2 ** -23);
  assert.equal(fmaf(x, x, -(2 ** -80)), 1 + 2 ** -11);
  assert.equal(fmaf(-x, x, -(2 ** -80)), -(1 + 2 ** -11 + 2 ** -23));
  assert.equal(fmaf(-x, x, 2 ** -80), -(1 + 2 ** -11));
  assert.equal(fmaf(3, 5, 7), 22);
});

test('Deterministic mode: bit for bit the documented order (ordered.js), fused or not as the probe says', async () => {
  assert.equal(fma.contracts, false, 'the device fuses a product and a sum written apart: no order can be promised');
  let probeMatters = false;
  const cases = [
    { M: 65, N: 63, K: 130, batch: 2, offA: 3, offB: 5, offC: 7, alpha: 1.5, beta: -0.5, ldc: 70 },
    { M: 40, N: 70, K: 1000, transA: true, transB: true, bias: true, act: 1, biasOffset: 2 },
    { M: 64, N: 7, K: 63, beta: 0.75, strideB: 0, batch: 3 },
    { M: 130, N: 65, K: 127, transB: true, alpha: -2 },
  ];
  for (const dtype of ['f32', 'f16', 'bf16']) {
    for (const spec of cases) {
      const o = operands(device, { dtype, ...spec });
      await gemms[`${dtype} deterministic`].run(o.args);
      const got = await read(device, o.buffers.c, o.c.length);
      const split = splitRanges('rule', o.g.M, o.g.N, o.g.K, o.g.batch, 1 << 22);
      const want = referenceOrdered(o.g, o.A, o.B, o.c, o.bias, fma.fused, split);
      for (let e = 0; e < got.length; e++) {
        assert.ok(Object.is(got[e], want[e]), `${dtype} ${JSON.stringify(spec)}: element ${e} is ${got[e]}, the documented order gives ${want[e]}`);
      }
      const other = referenceOrdered(o.g, o.A, o.B, o.c, o.bias, !fma.fused, split);
      probeMatters ||= other.some((x, e) => !Object.is(x, want[e]));
      release(o);
    }
  }
  assert.ok(probeMatters, 'no case tells a fused fma from an unfused one');
});

test('every refused call throws onegpu.h\'s message and writes nothing', async () => {
  const M = 8, N = 9, K = 10;
  const storage = (bytes, usage = GPUBufferUsage.STORAGE) => device.createBuffer({ size: bytes, usage });
  const c = buffer(device, new Float32Array(M * N).map((_, i) => i + 0.5));
  const base = {
    m: M, n: N, k: K, lda: K, ldb: N, ldc: N, alpha: 1, beta: 1, a: storage(4 * M * K), b: storage(4 * K * N), c,
    bias: storage(64), bias_offset: 0,
  };
  const cases = [
    [{ m: -1 }, 'gemm: M (-1) is negative'],
    [{ k: 2 ** 32 }, 'gemm: K (4294967296) exceeds 32-bit indexing'],
    [{ lda: 1.5 }, 'gemm: lda (1.5) is not an integer'],
    [{ lda: 9 }, 'gemm: lda (9) is smaller than K (10) for A not transposed'],
    [{ trans_a: true, lda: 7 }, 'gemm: lda (7) is smaller than M (8) for A transposed'],
    [{ trans_b: true, ldb: 5 }, 'gemm: ldb (5) is smaller than K (10) for B transposed'],
    [{ n: 0, ldc: 0 }, 'gemm: ldc (0) must be at least 1 (N is 0; BLAS asks for max(1, N))'],
    [{ activation: 7 }, 'gemm: activation 7 is not none, ReLU, GELU (erf) or GELU (tanh)'],
    [{ bias_offset: -1 }, 'gemm: bias offset (-1) is negative or too large'],
    [{ bias_offset: 8 }, 'gemm: bias needs 17 elements (offset 8 + N 9), but its buffer holds 16'],
    [{ batch: 2, stride_c: 10 }, 'gemm: stride_c (10) makes the batch\'s outputs overlap (needs at least (M-1)*ldc + N = 72)'],
    [{ a_offset: 1 }, 'gemm: A needs 81 elements (offset 1, 8 x 10 with ld 10, batch 1 with stride 0), but its buffer holds 80'],
    [{ batch: 2, stride_b: 1, stride_c: 72 }, 'gemm: B needs 91 elements (offset 0, 10 x 9 with ld 9, batch 2 with stride 1), but its buffer holds 90'],
    [{ c: null }, 'gemm: C is NULL'],
    [{ b: undefined }, 'gemm: B is NULL'],
    [{ a: {} }, 'gemm: A is not a GPUBuffer'],
    [{ a: storage(4 * M * K, GPUBufferUsage.COPY_DST) }, 'gemm: A\'s GPUBuffer lacks GPUBufferUsage.STORAGE'],
    [{ bias: storage(6) }, 'gemm: bias\'s GPUBuffer size (6 bytes) is not a whole number of 32-bit words (the kernels read words)'],
    [{ a: c, lda: N, k: N, ldb: N, b: storage(4 * N * N) }, 'gemm: C and A share a GPUBuffer, which WebGPU cannot bind both writable and read-only in one dispatch'],
    [{ lda: 2 ** 31 }, 'gemm: A spans more than 2^32 elements (stride and ld too large)'],
    [{ lda: 2 ** 26 }, /^gemm: A needs 1879048232 bytes in one binding, more than the device's maxStorageBufferBindingSize of \d+, and WebGPU has no device addresses to read it by address$/],
  ];
  const encoder = device.createCommandEncoder();
  for (const [change, message] of cases) {
    const args = { ...base, ...change };
    const expect = { message };
    assert.throws(() => gemms['f32 fast'].encode(encoder, args), expect, JSON.stringify(change));
    await assert.rejects(gemms['f32 fast'].run(args), expect);
  }
  assert.throws(() => createGemm(device, { dtype: 'f8' }), { message: 'gemm: input type f8 is not f32, f16 or bf16 (WebGPU runs the portable float kernels)' });
  assert.throws(() => createGemm(device, { mode: 'exact' }), { message: 'gemm: mode exact is not \'fast\' or \'deterministic\'' });
  device.queue.submit([encoder.finish()]);
  const after = await read(device, c, M * N);
  assert.ok(after.every((x, i) => x === i + 0.5), 'a refused call wrote C');

  // A device without WebGPU's default 256 invocations (compatibility mode's
  // 128): the tile (17 rows; at 8 the decode kernel runs, 32 invocations).
  const small = await openDevice('opengl', { limits: false });
  const o = operands(small, { M: 17, N, K });
  await assert.rejects(createGemm(small).run(o.args), {
    code: 'unsupported',
    message: /^gemm: the gemm_tile kernel bm=64,.*: 256 invocations a workgroup, more than the device's maxComputeInvocationsPerWorkgroup of 128$/,
  });
  small.destroy();
});

test('few rows by the rule (float32, M 1 to 4, A not transposed): B in both layouts, ragged, offsets, batches sharing B', async () => {
  const g = gemms['f32 fast'];
  for (const M of [1, 2, 3, 4]) for (const transB of [false, true]) {
    const spec = { M, N: 65 + 62 * M, K: 130 - 7 * M, batch: 2, strideB: M % 2 ? 0 : undefined, offA: 1, offB: 3, offC: 2, alpha: 1.25, beta: 0.5, transB, bias: M === 3, act: M === 3 ? 1 : 0 };
    const o = operands(device, spec);
    assert.match(g.describe(o.args), new RegExp(`^gemm_fewrows variant=fewrows,cols=${transB ? 8 : 16},slices=${transB ? 32 : 16},vec=1 \\(default\\)$`));
    release(o);
    await check(spec);
  }
  // The tile, not few rows (nor the decode kernel): 17 rows, A transposed, float16 at 17 rows.
  const tileSpecs = [{ M: 17, N: 40, K: 40 }, { M: 2, N: 40, K: 40, transA: true }, { dtype: 'f16', M: 17, N: 40, K: 40 }];
  for (const spec of tileSpecs) {
    const o = operands(device, spec);
    assert.match(gemms[`${spec.dtype ?? 'f32'} fast`].describe(o.args), /^gemm_tile /);
    release(o);
  }
  // B stored K x N with N >= 8192: 32 columns of 8 slices.
  const wide = operands(device, { M: 1, N: 8192, K: 3 });
  assert.match(g.describe(wide.args), /cols=32,slices=8,vec=1 \(default\)$/);
  release(wide);
});

test('Deterministic few rows: bit for bit the slices of the documented order', async () => {
  for (const transB of [false, true]) {
    const o = operands(device, { M: 3, N: 70, K: 301, transB, beta: -1, offA: 5, batch: 2 });
    await gemms['f32 deterministic'].run(o.args);
    const got = await read(device, o.buffers.c, o.c.length);
    const want = referenceOrdered(o.g, o.A, o.B, o.c, o.bias, fma.fused, { slices: transB ? 32 : 16 });
    got.forEach((x, e) => assert.ok(Object.is(x, want[e]), `B ${transB ? 'N x K' : 'K x N'}: element ${e} is ${x}, the documented order gives ${want[e]}`));
    release(o);
  }
});

test('the decode kernel by its rule (float16 and bfloat16 at M 1 to 16, float32 at 5 to 16, A not transposed): both layouts, ragged, offsets, batches sharing B', async () => {
  const specs = [
    ...[1, 2, 3, 8, 16].map((M) => ({ dtype: 'f16', M })),
    { dtype: 'bf16', M: 4 }, { dtype: 'f32', M: 5 }, { dtype: 'f32', M: 16 },
  ];
  for (const base of specs) for (const transB of [false, true]) {
    const M = base.M;
    const spec = { ...base, N: 65 + 6 * M, K: 130 - 7 * M, batch: 2, strideB: M % 2 ? 0 : undefined, offA: 1, offB: 3, offC: 2, alpha: 1.25, beta: 0.5, transB, bias: M === 3, act: M === 3 ? 1 : 0 };
    const o = operands(device, spec);
    const rows = Math.min(16, 2 ** Math.ceil(Math.log2(M)));
    const shape = transB ? 'cols=4,slices=32,tn=1' : 'cols=64,slices=4,tn=8';
    assert.equal(gemms[`${base.dtype} fast`].describe(o.args), `gemm_decode variant=decode,rows=${rows},${shape},vec=1 (default)`);
    release(o);
    await check(spec);
  }
  // A transposed, or 17 rows: the tile.
  for (const spec of [{ dtype: 'f16', M: 4, transA: true }, { dtype: 'bf16', M: 17 }]) {
    const o = operands(device, { ...spec, N: 40, K: 40 });
    assert.match(gemms[`${spec.dtype} fast`].describe(o.args), /^gemm_tile /);
    release(o);
  }
});

test('Deterministic decode kernel: bit for bit the slices and tree of the documented order', async () => {
  for (const [dtype, M] of [['f16', 3], ['bf16', 16], ['f32', 7]]) for (const transB of [false, true]) {
    const o = operands(device, { dtype, M, N: 70, K: 301, transB, beta: -1, offA: 5, batch: 2, bias: true, act: 1 });
    await gemms[`${dtype} deterministic`].run(o.args);
    const got = await read(device, o.buffers.c, o.c.length);
    const want = referenceOrdered(o.g, o.A, o.B, o.c, o.bias, fma.fused, { decodeSlices: transB ? 32 : 4 });
    got.forEach((x, e) => assert.ok(Object.is(x, want[e]), `${dtype} M ${M} B ${transB ? 'N x K' : 'K x N'}: element ${e} is ${x}, the documented order gives ${want[e]}`));
    release(o);
  }
});

test('alpha = 0 and K = 0: C = act(beta * C + bias) by the scale kernel, A and B never read (NaN there)', async () => {
  const nan = (n) => new Uint32Array(n).fill(0x7fc00000);
  for (const [alpha, K] of [[0, 50], [1.5, 0]]) for (const beta of [0, 0.5]) {
    const o = operands(device, { M: 33, N: 70, K, lda: Math.max(1, K), alpha, beta, bias: true, act: 1, cFill: beta ? null : NaN, batch: 2 });
    device.queue.writeBuffer(o.buffers.a, 0, nan(o.buffers.a.size / 4));
    device.queue.writeBuffer(o.buffers.b, 0, nan(o.buffers.b.size / 4));
    const args = K === 0 ? { ...o.args, a: null, b: null } : o.args;
    assert.match(gemms['f32 fast'].describe(args), new RegExp(`^elementwise scale: .*\\(${K === 0 ? 'K' : 'alpha'} is 0\\)$`));
    await gemms['f32 fast'].run(args);
    const got = await read(device, o.buffers.c, o.c.length);
    const want = referenceOrdered({ ...o.g, K: 0 }, o.A, o.B, o.c, o.bias, fma.fused);
    got.forEach((x, e) => assert.ok(Object.is(x, want[e]), `alpha ${alpha} K ${K} beta ${beta}: element ${e} is ${x}, not ${want[e]}`));
    release(o);
  }
  // beta = 1 and no epilogue: C stays bit for bit, NaN and -0 included.
  const o = operands(device, { M: 5, N: 6, K: 0, lda: 1, beta: 1, cFill: -0 });
  await gemms['f32 fast'].run({ ...o.args, a: null, b: null });
  assert.ok((await read(device, o.buffers.c, o.c.length)).every((x) => Object.is(x, -0)));
  release(o);
});

test('the elementwise kernels: GEMM, then bias, then activation give the fused epilogue\'s bits', async () => {
  const g = gemms['bf16 fast'];
  for (const act of [1, 2, 3]) {
    const spec = { dtype: 'bf16', M: 20, N: 75, K: 40, batch: 2, offC: 3, ldc: 80, beta: 0.5, bias: true, biasOffset: 5, act };
    const fused = operands(device, spec);
    await g.run(fused.args);
    const apart = operands(device, spec);
    await g.run({ ...apart.args, bias: null, activation: 0 });
    await g.runElementwise(Elementwise.BIAS, apart.args);
    await g.runElementwise(Elementwise.ACTIVATION, apart.args);
    const [x, y] = [await read(device, fused.buffers.c, fused.c.length), await read(device, apart.buffers.c, apart.c.length)];
    x.forEach((v, e) => assert.ok(Object.is(v, y[e]), `activation ${act}: element ${e}: fused ${v}, apart ${y[e]}`));
    release(fused);
    release(apart);
  }
  const o = operands(device, { M: 4, N: 5, K: 1 });
  assert.throws(() => g.encodeElementwise(device.createCommandEncoder(), 2, o.args), { message: 'elementwise: operation 2 is not bias add or activation' });
  assert.throws(() => g.encodeElementwise(device.createCommandEncoder(), Elementwise.BIAS, o.args), { message: 'elementwise: bias add without a bias' });
  await assert.rejects(g.runElementwise(Elementwise.ACTIVATION, { ...o.args, ldc: 4 }), { message: 'elementwise: ldc (4) is smaller than N (5)' });
  await assert.rejects(g.runElementwise(Elementwise.ACTIVATION, { ...o.args, activation: 4 }), { message: 'elementwise: activation 4 is not none, ReLU, GELU (erf) or GELU (tanh)' });
  release(o);
});

test('a grid past maxComputeWorkgroupsPerDimension runs in pieces with the same bits (the limit lowered to 4)', async () => {
  const specs = [
    { M: 300, N: 200, K: 90, batch: 5, offA: 3, offC: 1, beta: 0.5, bias: true, act: 1 }, // 2 row pieces x 2 batch pieces
    { M: 130, N: 250, K: 200, batch: 3, transA: true }, // split-k: 3 ranges, one product a piece
    { M: 3, N: 60, K: 100, batch: 6, strideB: 0 }, // few rows: 4 products a piece
    { M: 9, N: 60, K: 100, batch: 6, offA: 2 }, // the decode kernel: 4 products a piece
    { M: 9, N: 70, K: 0, lda: 1, batch: 6, beta: 2, bias: true }, // the scale kernel steps over rows and products
  ];
  for (const spec of specs) {
    const whole = gemms['f32 deterministic'];
    const cut = createGemm(device, { mode: 'deterministic' });
    cut.limits = { ...cut.limits, maxCount: 4 }; // what the planner reads of maxComputeWorkgroupsPerDimension
    const [x, y] = [operands(device, spec), operands(device, spec)];
    await whole.run(x.args);
    await cut.run(y.args);
    const [a, b] = [await read(device, x.buffers.c, x.c.length), await read(device, y.buffers.c, y.c.length)];
    a.forEach((v, e) => assert.ok(Object.is(v, b[e]), `${JSON.stringify(spec)}: element ${e}: whole ${v}, pieces ${b[e]}`));
    release(x);
    release(y);
    cut.destroy();
  }
  const cut = createGemm(device);
  cut.limits = { ...cut.limits, maxCount: 4 };
  const o = operands(device, { M: 64, N: 257, K: 8 });
  await assert.rejects(cut.run(o.args), { code: 'unsupported', message: 'gemm: N = 257 needs 5 workgroups along x, more than the device\'s maxComputeWorkgroupsPerDimension of 4' });
  release(o);
});

test('encode records into the page\'s encoder: two split-k GEMMs in one submission, the second reading the first\'s C', async () => {
  const g = gemms['f32 fast'];
  const first = operands(device, { M: 40, N: 200, K: 150, beta: 0 });
  const second = operands(device, { M: 40, N: 20, K: 200, beta: 0 });
  const args2 = { ...second.args, a: first.buffers.c, lda: 200 };
  assert.match(g.describe(first.args), /k ranges/);
  assert.match(g.describe(args2), /k ranges/); // both use the object's one scratch, in order
  const encoder = device.createCommandEncoder();
  g.encode(encoder, first.args);
  g.encode(encoder, args2);
  device.queue.submit([encoder.finish()]);
  const c1 = await read(device, first.buffers.c, first.c.length);
  const c2 = await read(device, second.buffers.c, second.c.length);
  const want1 = reference(first.g, first.A, first.B, Float64Array.from(first.c), Float64Array.from(first.bias));
  const want2 = reference(second.g, Float64Array.from(c1), second.B, Float64Array.from(second.c), Float64Array.from(second.bias));
  const err = (got, want) => got.reduce((m, x, e) => Math.max(m, Math.abs(x - want[e])), 0) / want.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  assert.ok(err(c1, want1) <= 1e-5, `first: ${err(c1, want1)}`);
  assert.ok(err(c2, want2) <= 1e-5, `second: ${err(c2, want2)}`);
  release(first);
  release(second);
});

/**
 * The uniform buffers device.createBuffer makes while fn runs, each with
 * whether destroy() was called on it: {result (fn's), made: [{buffer, destroyed}]}.
 */
function uniformsMade(fn) {
  const made = [];
  const create = device.createBuffer;
  device.createBuffer = (desc) => {
    const buffer = create.call(device, desc);
    if (desc.usage & GPUBufferUsage.UNIFORM) {
      const u = { buffer, destroyed: false };
      const destroy = buffer.destroy;
      buffer.destroy = () => {
        u.destroyed = true;
        destroy.call(buffer);
      };
      made.push(u);
    }
    return buffer;
  };
  try {
    return { result: fn(), made };
  } finally {
    device.createBuffer = create;
  }
}

test('encode\'s release destroys the uniform buffers of its call: after the submit the work is intact, before it the submission is refused', async () => {
  const g = gemms['f32 fast'];
  const o = operands(device, { M: 40, N: 200, K: 150, beta: 0.5, bias: true, act: 1 });
  assert.match(g.describe(o.args), /k ranges/); // the planes, then their reduction: a uniform each
  const encoder = device.createCommandEncoder();
  const { result: releaseGemm, made } = uniformsMade(() => g.encode(encoder, o.args));
  assert.equal(made.length, 2);
  assert.deepEqual(made.map((u) => u.destroyed), [false, false]);
  device.queue.submit([encoder.finish()]);
  releaseGemm();
  assert.deepEqual(made.map((u) => u.destroyed), [true, true]);
  releaseGemm(); // twice: nothing more
  // The work submitted before the release ran with its uniforms.
  const got = await read(device, o.buffers.c, o.c.length);
  const want = reference(o.g, o.A, o.B, Float64Array.from(o.c), Float64Array.from(o.bias));
  const err = got.reduce((m, x, e) => Math.max(m, Math.abs(x - want[e])), 0) / want.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  assert.ok(err <= 1e-5, `max error ${err}`);
  // Released before the submit, the buffers are gone: WebGPU refuses it.
  const early = device.createCommandEncoder();
  g.encode(early, o.args)();
  device.pushErrorScope('validation');
  device.queue.submit([early.finish()]);
  assert.ok(await device.popErrorScope(), 'a submission using released uniform buffers was accepted');
  release(o);

  // encodeElementwise's release too, its work intact: runElementwise's bits.
  const spec = { M: 20, N: 75, K: 1, batch: 2, offC: 3, ldc: 80, act: 2 };
  const [x, y] = [operands(device, spec), operands(device, spec)];
  const encoder2 = device.createCommandEncoder();
  const ew = uniformsMade(() => g.encodeElementwise(encoder2, Elementwise.ACTIVATION, x.args));
  assert.equal(ew.made.length, 1);
  device.queue.submit([encoder2.finish()]);
  ew.result();
  assert.ok(ew.made[0].destroyed);
  await g.runElementwise(Elementwise.ACTIVATION, y.args);
  const [a, b] = [await read(device, x.buffers.c, x.c.length), await read(device, y.buffers.c, y.c.length)];
  a.forEach((v, e) => assert.ok(Object.is(v, b[e]), `element ${e}: encoded and released ${v}, run ${b[e]}`));
  assert.ok(a.some((v, e) => v !== x.c[e]), 'the activation changed nothing');
  release(x);
  release(y);
});
