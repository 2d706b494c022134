// The low-bit weight product of the WebGPU runtime (createQGemm, web/onegpu
// as the build writes it: module.js) on Dawn's OpenGL backend (Mesa's
// llvmpipe here), against qgemm.js's float64 reference over images packed
// and decoded from runtime/onegpu_formats.h's table: every format (MXFP4,
// NVFP4 with a tensor scale, INT4, Q8_0; Q4_K and Q6_K in turn) x M in {1, 5} (one row, a
// ragged tile of 8) x A float32, float16, bfloat16 and M 17 (the prefill tile)
// x float32 (float16 and bfloat16 through INT4's kinds) within a
// bound on float32 rounding of the terms, and with small integers bit for
// bit; INT4's other kernels (bfloat16 scales, uint4 and float zero points;
// groups 32, 64, 128 and per row); the epilogue (beta, bias, ReLU, GELU); experts (a batch of
// images stride_w apart, or one shared); offsets and leading dimensions;
// every refusal with og_qgemm_check's message and nothing written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createQGemm, parseQFormat, qformatKey, qweightsLayout, table } from './module.js';
import { generate, kernelEntry, paramText } from './kernels.js';
import { openDevice } from './gpu.js';
import { buffer, read } from './runtime.js';
import { runQCase } from './qgemm.js';

let device;
before(async () => { device = await openDevice('opengl'); });
after(() => device?.destroy());

const formats = ['mxfp4', 'nvfp4', 'q8_0', 'int4'];
// INT4's other kernels (scale type x zero points; the group is a uniform),
// each with one type and M: llvmpipe takes seconds to build each kernel.
const int4Kinds = [['int4:g64:f16:uint4', 'f16', 17], ['int4:g128:f16:float', 'bf16', 17], ['int4:gc:bf16', 'f32', 1],
  ['int4:g32:bf16:uint4', 'f32', 5], ['int4:g64:bf16:float', 'f16', 1]];
const objects = new Map();
const qgemmOf = (format, dtype) => {
  const id = `${format} ${dtype}`;
  if (!objects.has(id)) objects.set(id, createQGemm(device, { dtype, format }));
  return objects.get(id);
};

/** Runs spec (format, dtype and qgemm.js's fields) and asserts its findings; returns them. */
async function check(spec) {
  const { format, dtype = 'f32' } = spec;
  const full = { ...spec, dtype, f: parseQFormat(format), lay: qweightsLayout(format, spec.n, spec.k) };
  const r = await runQCase(device, qgemmOf(format, dtype), full);
  const what = JSON.stringify(spec);
  assert.deepEqual(r.outside, [], what);
  assert.deepEqual(r.bad, [], what);
  if (spec.integer) assert.ok(r.exact, `${what}: small integers are not bit for bit`);
  return r;
}

/** A random case and a small-integer case of format, dtype and M. */
async function both(format, dtype, m) {
  const k = format.includes('g128') ? 256 : 192;
  await check({ format, dtype, m, n: 37, k, tensorScale: format === 'nvfp4' ? 0.375 : 0 });
  await check({ format, dtype, m, n: 9, k: format.includes('g128') ? 128 : 64, integer: true });
}

// The prefill tile (M = 17) with float32 A, the type the epilogue test
// below also runs it with; float16 and bfloat16 A through INT4's kinds:
// each kernel costs llvmpipe seconds to build.
for (const format of formats) {
  test(`${format}: M 1, 5 x A f32, f16, bf16 and M 17 x f32 against the float64 reference, and small integers bit for bit`, async () => {
    for (const dtype of ['f32', 'f16', 'bf16']) for (const m of dtype === 'f32' ? [1, 5, 17] : [1, 5]) await both(format, dtype, m);
  });
}

test('GGUF\'s K-quants: Q4_K at M 1 x A f32 and 17 x f16, Q6_K at M 5 x bf16 and 17 x f32, against the float64 reference, and small integers bit for bit', async () => {
  for (const [format, cases] of [['q4_k', [['f32', 1], ['f16', 17]]], ['q6_k', [['bf16', 5], ['f32', 17]]]]) {
    for (const [dtype, m] of cases) {
      await check({ format, dtype, m, n: 37, k: 512 });
      await check({ format, dtype, m, n: 9, k: 256, integer: true });
    }
  }
});

test('INT4 with float16 and bfloat16 scales, no, uint4 and float zero points, groups 32, 64, 128 and per row', async () => {
  for (const [format, dtype, m] of int4Kinds) await both(format, dtype, m);
});

// The cases below reuse the kernels above (rows 1 and 8, and the prefill tile).
test('the epilogue: beta, the bias, ReLU and both GELUs, bit for bit where the values are integers', async () => {
  for (const [i, act] of [0, 1, 2, 3].entries()) {
    await check({ format: formats[i], dtype: 'f16', m: 6, n: 21, k: 128, beta: 0.5, bias: true, act, tensorScale: 3 });
    await check({ format: formats[3 - i], m: 17, n: 6, k: 64, beta: -1.25, bias: true, act });
  }
  await check({ format: 'int4', m: 7, n: 11, k: 64, beta: 2, bias: true, act: 1, integer: true });
  // beta = 0 never reads C: NaN there is overwritten.
  await check({ format: 'q8_0', m: 1, n: 8, k: 64, cFill: NaN });
});

test('experts: a batch of images stride_w apart (and one shared, stride_w 0), with A and C strides', async () => {
  for (const format of formats) {
    for (const m of [1, 6]) {
      await check({ format, dtype: 'bf16', m, n: 13, k: 128, batch: 3, tensorScale: 2 });
      await check({ format, m, n: 13, k: 128, batch: 2, strideW: 0, strideA: m * 128 + 5, strideC: m * 13 + 3 });
    }
  }
  await check({ format: 'int4:g64:bf16:float', dtype: 'f16', m: 1, n: 5, k: 128, batch: 4, integer: true });
});

test('offsets and leading dimensions: A at odd elements, W 48 bytes in, C and the rows past their ld', async () => {
  for (const dtype of ['f32', 'f16', 'bf16']) {
    await check({ format: 'nvfp4', dtype, m: 5, n: 19, k: 96, aOffset: 3, lda: 101, wOffset: 48, cOffset: 7, ldc: 23, tensorScale: 0.5 });
    await check({ format: 'int4', dtype, m: 18, n: 5, k: 64, aOffset: 1, lda: 65, wOffset: 272, cOffset: 2, ldc: 9, batch: 2, integer: true });
  }
});

// The integer path (createQGemm's dot, docs/decode.md): the default table
// has no such kernels (tools/generate-kernels.js --integer-path), so each
// case gets a table with its one kernel from ogtune.
test('the integer path (dot 1: dot4I8Packed, 2: emulated): every format kind at M 1, 3 and 8 within its quantisation bound; Deterministic mode refuses it', async () => {
  const cases = [['mxfp4', 'f32', 1, 1], ['nvfp4', 'f16', 3, 2], ['q8_0', 'bf16', 8, 1], ['int4', 'f32', 3, 2],
    ['int4:g64:bf16:float', 'f16', 1, 1], ['int4:g32:f16:uint4', 'f32', 8, 2], ['q4_k', 'f32', 1, 2], ['q6_k', 'f16', 3, 1]];
  for (const [format, dtype, m, dot] of cases) {
    const params = { variant: 'qdecode', rows: m === 1 ? 1 : m === 3 ? 4 : 8, cols: 4, slices: 32, vec: 1, dot };
    const text = paramText(params);
    const entry = kernelEntry(generate({ params, dtype, weights: format }));
    const kernels = { ...table, qgemm: { ...table.qgemm, [text]: { [`${dtype}.${qformatKey(parseQFormat(format))}`]: entry } } };
    const q = createQGemm(device, { dtype, format, dot, kernels });
    const k = format.startsWith('q4_k') || format.startsWith('q6_k') ? 256 : 192;
    const spec = { format, dtype, m, n: 21, k, dot, tensorScale: format === 'nvfp4' ? 0.375 : 0,
      f: parseQFormat(format), lay: qweightsLayout(format, 21, k) };
    const r = await runQCase(device, q, spec);
    const what = JSON.stringify([format, dtype, m, dot]);
    assert.deepEqual(r.outside, [], what);
    assert.deepEqual(r.bad, [], what);
    assert.ok(!r.exact, `${what}: the float path's bits (the integer path did not run)`);
  }
  assert.throws(() => createQGemm(device, { format: 'q8_0', mode: 'deterministic', dot: 1 }),
    { message: 'qgemm: dot=1 (the integer path, int8 activations) runs in Fast mode only; Deterministic mode keeps the float path and its documented order' });
  assert.throws(() => createQGemm(device, { format: 'q8_0', dot: 3 }), /qgemm: dot 3 is 0/);
  // The default table: the call names the kernel it lacks.
  const lay = qweightsLayout('q8_0', 8, 64);
  const args = { m: 1, n: 8, k: 64, a: buffer(device, new Float32Array(64)), lda: 64,
    w: buffer(device, new Uint32Array(Number(lay.bytes) / 4)), c: buffer(device, new Float32Array(8)), ldc: 8 };
  assert.throws(() => createQGemm(device, { format: 'q8_0', dot: 1 }).describe(args),
    /qgemm: this kernel table has no decode kernel variant=qdecode,rows=1,cols=4,slices=32,vec=1,dot=1 for f32.q8_0/);
  for (const b of [args.a, args.w, args.c]) b.destroy();
});

test('the layout of onegpu_formats.h, as og_qweights_layout_of computes it', () => {
  const l = qweightsLayout('int4:g64:bf16:uint4', 3, 192);
  assert.deepEqual([l.block, l.blocks, l.codeRowBytes, l.scalesAt, l.scaleRowBytes, l.zerosAt, l.zeroRowBytes, l.bytes],
    [64, 3, 96, 288, 16, 336, 16, 384]);
  const q = qweightsLayout('q8_0', 2, 64);
  assert.deepEqual([q.codeBits, q.codeRowBytes, q.scalesAt, q.scaleRowBytes, q.bytes], [8, 64, 128, 16, 160]);
  assert.equal(qweightsLayout('int4:gc', 1, 4096).block, 4096);
  assert.throws(() => qweightsLayout('int4', 1, 48), { message: 'qweights: K (48) is not a multiple of 32' });
  assert.throws(() => qweightsLayout('mxfp4:g32', 1, 64), /is not mxfp4, nvfp4, q8_0, q4_k, q6_k or int4/);
});

test('every refused call throws og_qgemm_check\'s message and writes nothing', async () => {
  const format = 'nvfp4', lay = qweightsLayout(format, 8, 64);
  const a = buffer(device, new Float32Array(4 * 64)), w = buffer(device, new Uint32Array(lay.bytes / 4));
  const c = buffer(device, new Float32Array(4 * 8).map((_, i) => i + 0.5)), bias = buffer(device, new Float32Array(8));
  const base = { m: 4, n: 8, k: 64, a, lda: 64, w, c, ldc: 8 };
  const q = createQGemm(device, { format });
  const cases = [
    [{ m: -1 }, 'qgemm: M (-1) is negative'],
    [{ stride_w: -16 }, 'qgemm: stride_w (-16) is negative'],
    [{ k: 48 }, 'qgemm: qweights: K (48) is not a multiple of 32'],
    [{ k: 0 }, 'qgemm: qweights: K (0) is below 1'],
    [{ n: 0, k: 40 }, 'qgemm: qweights: K (40) is not a multiple of 32'],
    [{ w_offset: 8 }, 'qgemm: w_offset (8 bytes) is not a multiple of 16'],
    [{ stride_w: 24 }, 'qgemm: stride_w (24 bytes) is not a multiple of 16'],
    [{ batch: 2, stride_w: 16 }, `qgemm: stride_w (16 bytes) is less than one weight matrix (${lay.bytes} bytes): stacked matrices would overlap`],
    [{ tensor_scale: -1 }, 'qgemm: tensor_scale (-1) is not a finite non-negative number'],
    [{ tensor_scale: NaN }, 'qgemm: tensor_scale (nan) is not a finite non-negative number'],
    [{ tensor_scale: 1e39 }, 'qgemm: tensor_scale (inf) is not a finite non-negative number'],
    [{ tensor_scale: -2.5e-7 }, 'qgemm: tensor_scale (-2.5e-07) is not a finite non-negative number'],
    [{ a_offset: -1 }, 'qgemm: a_offset (-1) is negative'],
    [{ lda: 32 }, 'qgemm: lda (32) is smaller than K (64) for A not transposed'],
    [{ ldc: 4 }, 'qgemm: ldc (4) is smaller than N (8)'],
    [{ activation: 5 }, 'qgemm: activation 5 is not none, ReLU, GELU (erf) or GELU (tanh)'],
    [{ bias, bias_offset: 1 }, 'qgemm: bias needs 9 elements (offset 1 + N 8), but its buffer holds 8'],
    [{ batch: 2, stride_c: 8 }, 'qgemm: stride_c (8) makes the batch\'s outputs overlap (needs at least (M-1)*ldc + N = 32)'],
    [{ a_offset: 1 }, 'qgemm: A needs 257 elements (offset 1, 4 x 64 with ld 64, batch 1 with stride 0), but its buffer holds 256'],
    [{ a: null }, 'qgemm: A is NULL'],
    [{ c_offset: 1 }, 'qgemm: C needs 33 elements (offset 1, 4 x 8 with ld 8, batch 1 with stride 0), but its buffer holds 32'],
    [{ w_offset: 16 }, `qgemm: W needs ${lay.bytes / 4 + 4} elements (offset 4, 1 x ${lay.bytes / 4} with ld ${lay.bytes / 4}, batch 1 with stride 0), but its buffer holds ${lay.bytes / 4}`],
    [{ w: null }, 'qgemm: W is NULL'],
    [{ c: a }, 'qgemm: C and A share a GPUBuffer, which WebGPU cannot bind both writable and read-only in one dispatch'],
    [{ m: 1.5 }, 'qgemm: m (1.5) is not an integer'],
  ];
  for (const [change, message] of cases) {
    const args = { ...base, ...change };
    const encoder = device.createCommandEncoder();
    assert.throws(() => q.encode(encoder, args), { message, code: 'invalid-argument' }, JSON.stringify(change));
    device.queue.submit([encoder.finish()]);
    await assert.rejects(q.run(args), { message }, JSON.stringify(change));
  }
  assert.throws(() => createQGemm(device, { format: 'int4:g48' }), { message: 'qgemm: weight format int4:g48 is not mxfp4, nvfp4, q8_0, q4_k, q6_k or int4[:gN|:gc][:f16|:bf16][:none|:uint4|:float]' });
  assert.throws(() => createQGemm(device, { format: 'mxfp4', dtype: 'e4m3' }), { message: 'qgemm: input type e4m3 is not f32, f16 or bf16' });
  assert.throws(() => createQGemm(device, { format: 'mxfp4', mode: 'exact' }), { message: 'qgemm: mode exact is not \'fast\' or \'deterministic\'' });
  const after_ = await read(device, c, 32);
  assert.ok(after_.every((x, i) => x === i + 0.5), 'a refused call wrote C');
  // M = 0 or N = 0: nothing to compute, nothing written, W unchecked.
  await q.run({ ...base, m: 0, w: null });
  assert.equal(q.describe({ ...base, n: 0, w: null }), 'nothing to compute (M or N is 0)');
  assert.equal(q.describe(base), 'qgemm:nvfp4 qgemm_decode variant=qdecode,rows=4,cols=4,slices=32,vec=1 (default)');
  const int4 = createQGemm(device, { format: 'int4:uint4', mode: 'deterministic' });
  const lay4 = qweightsLayout('int4:uint4', 8, 64), w4 = buffer(device, new Uint32Array(lay4.bytes / 4));
  const a40 = buffer(device, new Float32Array(40 * 64)), c40 = buffer(device, new Float32Array(40 * 8));
  assert.equal(int4.describe({ ...base, a: a40, w: w4, c: c40, m: 40 }),
    'qgemm:int4:g32:f16:uint4 gemm_tile bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo,split=1 (default, Deterministic mode)');
  for (const b of [w4, a40, c40]) b.destroy();
  for (const b of [a, w, c, bias]) b.destroy();
});
