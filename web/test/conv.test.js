// The convolution of the WebGPU runtime (createConv, web/onegpu as the
// build writes it: module.js) on Dawn's OpenGL backend (Mesa's llvmpipe
// here), against the float64 direct convolution of conv.js (written from
// onegpu.h's formulas) with the design's bounds relative to max|ref|, every
// element of y's buffer outside y unchanged: a grid in the manner of
// ggml's conv_2d tests (strides, dilations, paddings, both layouts and
// weight orders), groups and depthwise, padding wider than the filter,
// float16 and bfloat16 inputs, split-k, the epilogue, 1-D, the 1x1
// convolution that is the GEMM; Deterministic mode bit for bit against the
// documented order (docs/accumulation-order.md, "Convolution"); pieces;
// every refusal with onegpu.h's message and nothing written.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ConvLayout, ConvWeights, convOutputSize, createConv, probeFma, splitRanges } from './module.js';
import { openDevice } from './gpu.js';
import { convOperands, convOrdered, convProblem, runConvCase } from './conv.js';
import { buffer, read } from './runtime.js';

let device, fma;
const convs = {};
before(async () => {
  device = await openDevice('opengl');
  fma = await probeFma(device);
  for (const dtype of ['f32', 'f16', 'bf16']) for (const mode of ['fast', 'deterministic']) convs[`${dtype} ${mode}`] = createConv(device, { dtype, mode });
});
after(() => device?.destroy());

/** Runs spec with its type's and mode's object and asserts runConvCase's findings; returns them. */
async function check(spec, { conv = convs[`${spec.dtype ?? 'f32'} ${spec.mode ?? 'fast'}`] } = {}) {
  const { mode, ...fields } = spec;
  const r = await runConvCase(device, conv, fields);
  const what = JSON.stringify(fields);
  assert.deepEqual(r.outside, [], what);
  assert.deepEqual(r.nonFinite, [], what);
  assert.ok(r.maxRef > 0, `${what}: y is all zeros`);
  assert.ok(r.maxErr <= r.bound * r.maxRef, `${what}: max error ${r.maxErr} > ${r.bound} * ${r.maxRef}`);
  return r;
}

/** The description run gives for spec (its buffers made and destroyed). */
function describe(spec, conv = convs[`${spec.dtype ?? 'f32'} fast`]) {
  const o = convOperands(device, spec);
  const text = conv.describe(o.args);
  for (const b of Object.values(o.buffers)) b.destroy();
  return text;
}

test('a grid as ggml\'s conv_2d tests: 3x3 and 3x1 filters, strides, dilations and paddings 0 to 2, both layouts and weight orders', async () => {
  let n = 0;
  for (const [r, s] of [[3, 3], [3, 1], [1, 3]]) for (const stride of [1, 2]) for (const dilation of [1, 2]) for (const pad of [0, 1, 2]) {
    const layout = n % 2, weights = (n >> 1) % 2;
    const spec = {
      layout, weights, n: 2, c: 3 + (n % 3), h: 9, w: 11, k: 5 + (n % 4), r, s,
      stride_h: stride, stride_w: 3 - stride, dilation_h: dilation, dilation_w: 3 - dilation,
      pad_top: pad, pad_bottom: (pad + 1) % 3, pad_left: (pad + 2) % 3, pad_right: pad,
    };
    const t = convProblem(spec);
    if (t.P < 1 || t.Q < 1) continue;
    await check(spec);
    n++;
  }
  assert.ok(n >= 30, `${n} cases`);
});

test('groups and depthwise (channel multiplier 1 and 2), NHWC and NCHW, with a bias', async () => {
  for (const layout of [ConvLayout.NHWC, ConvLayout.NCHW]) for (const weights of [ConvWeights.KRSC, ConvWeights.KCRS]) {
    await check({ layout, weights, n: 2, c: 6, h: 7, w: 8, k: 9, r: 3, s: 3, groups: 3, pad_top: 1, pad_bottom: 1, pad_left: 1, pad_right: 1, bias: true });
    await check({ layout, weights, n: 1, c: 8, h: 10, w: 9, k: 8, r: 3, s: 3, groups: 8, stride_h: 2, pad_top: 1, pad_left: 2, pad_right: 1 });
    await check({ layout, weights, n: 3, c: 4, h: 5, w: 6, k: 8, r: 3, s: 2, groups: 4, dilation_w: 2, bias: true, act: 1 });
  }
});

test('padding larger than the filter: output pixels wholly in the padding get the bias, asymmetric pads', async () => {
  for (const layout of [ConvLayout.NHWC, ConvLayout.NCHW]) {
    const r = await check({ layout, n: 1, c: 3, h: 4, w: 5, k: 4, r: 3, s: 3, pad_top: 5, pad_bottom: 4, pad_left: 6, pad_right: 3, bias: true });
    // Row 0 of the output sees rows -5..-3 of the input: the bias alone.
    const { t } = r.o;
    const at = (kk, p, q) => t.yOff + (layout ? (kk * t.P + p) * t.Q + q : (p * t.Q + q) * t.k + kk);
    for (let kk = 0; kk < t.k; kk++) assert.equal(r.got[at(kk, 0, 0)], r.o.bias[kk]);
    await check({ layout, weights: ConvWeights.KCRS, n: 2, c: 2, h: 3, w: 3, k: 3, r: 2, s: 2, stride_h: 3, stride_w: 2, pad_top: 3, pad_bottom: 3, pad_left: 4, pad_right: 2 });
  }
});

test('float16 and bfloat16 inputs as pairs in u32 words: odd offsets, both layouts, split-k and not', async () => {
  for (const dtype of ['f16', 'bf16']) for (const layout of [ConvLayout.NHWC, ConvLayout.NCHW]) {
    await check({ dtype, layout, weights: layout, n: 2, c: 5, h: 8, w: 7, k: 6, r: 3, s: 3, pad_top: 1, pad_bottom: 1, pad_left: 1, pad_right: 1, xOff: 3, wOff: 1, yOff: 5, beta: 0.5 });
    assert.match(describe({ dtype, layout, n: 1, c: 64, h: 6, w: 6, k: 20, r: 3, s: 3 }), /k ranges/);
    await check({ dtype, layout, weights: 1 - layout, n: 1, c: 64, h: 6, w: 6, k: 20, r: 3, s: 3, xOff: 1, yOff: 3, bias: true, act: 2 });
  }
});

test('the epilogue and split-k: beta = 0 over NaN in y, beta, bias and each activation, ranges of the implicit GEMM', async () => {
  for (const act of [0, 1, 2, 3]) {
    const spec = { layout: act % 2, weights: act >> 1, n: 2, c: 40, h: 5, w: 6, k: 7, r: 3, s: 3, pad_top: 1, pad_left: 1, bias: true, act };
    assert.match(describe(spec), /; \d+ k ranges of \d+$/);
    await check({ ...spec, beta: act === 0 ? 0 : -0.75, yFill: act === 0 ? NaN : null });
  }
  await check({ n: 1, c: 4, h: 6, w: 6, k: 5, r: 3, s: 3, yFill: NaN });
});

test('1-D convolutions (H = 1, R = 1), and the 1x1 convolution that is the GEMM', async () => {
  // Whisper's first layer in miniature: NCW, KCS weights, padding 1, GELU.
  const whisper = { layout: ConvLayout.NCHW, weights: ConvWeights.KCRS, n: 1, c: 8, h: 1, w: 300, k: 12, r: 1, s: 3, pad_left: 1, pad_right: 1, bias: true, act: 2 };
  assert.match(describe(whisper), /^conv NCHW KCRS, implicit GEMM 300x12x24 x 1 products: gemm_tile bm=64,.* \(default\)$/);
  await check(whisper);
  await check({ ...whisper, layout: ConvLayout.NHWC, weights: ConvWeights.KRSC, stride_w: 2, dilation_w: 3 });
  const gemm = { n: 2, c: 16, h: 5, w: 7, k: 10, r: 1, s: 1, beta: 0.5, bias: true, act: 1, xOff: 2, yOff: 1 };
  assert.match(describe(gemm), /^1x1 convolution as a GEMM 70x10x16: gemm_tile .*\(default\)$/);
  await check(gemm);
  // Not the GEMM: NCHW, or a stride.
  assert.match(describe({ ...gemm, layout: ConvLayout.NCHW }), /^conv NCHW KRSC, implicit GEMM 35x10x16 x 2 products/);
  assert.match(describe({ ...gemm, stride_h: 2 }), /^conv NHWC KRSC, implicit GEMM 21x10x16 x 2 products/);
  assert.equal(describe({ ...gemm, n: 0 }), 'nothing to compute (no image or no output channel)');
});

test('Deterministic mode: bit for bit the documented order over the explicit im2col matrix, split-k included', async () => {
  assert.equal(fma.contracts, false, 'the device fuses a product and a sum written apart: no order can be promised');
  const cases = [
    { layout: ConvLayout.NHWC, weights: ConvWeights.KRSC, n: 2, c: 6, h: 7, w: 6, k: 9, r: 3, s: 3, groups: 3, pad_top: 1, pad_bottom: 2, pad_left: 1, pad_right: 0, beta: 0.5, bias: true, act: 1 },
    { layout: ConvLayout.NCHW, weights: ConvWeights.KCRS, n: 1, c: 48, h: 6, w: 5, k: 10, r: 3, s: 3, stride_w: 2, dilation_h: 2, pad_top: 2, pad_left: 1 },
    { layout: ConvLayout.NCHW, weights: ConvWeights.KRSC, n: 2, c: 8, h: 9, w: 9, k: 8, r: 3, s: 3, groups: 8, pad_top: 1, pad_left: 1, pad_right: 1, beta: -1 },
  ];
  let probeMatters = false, split = false;
  for (const dtype of ['f32', 'f16', 'bf16']) for (const spec of cases) {
    const o = convOperands(device, { dtype, ...spec });
    const conv = convs[`${dtype} deterministic`];
    await conv.run(o.args);
    const got = await read(device, o.buffers.y, o.y.length);
    const { t } = o;
    const ranges = splitRanges('rule', t.P * t.Q, t.Kg, t.Cg * t.r * t.s, t.n * t.groups, 1 << 22);
    split ||= ranges.ranges > 1;
    const want = convOrdered(t, o.x, o.wt, o.y, o.bias, fma.fused, ranges);
    got.forEach((v, e) => assert.ok(Object.is(v, want[e]), `${dtype} ${JSON.stringify(spec)}: element ${e} is ${v}, the documented order gives ${want[e]}`));
    probeMatters ||= convOrdered(t, o.x, o.wt, o.y, o.bias, !fma.fused, ranges).some((v, e) => !Object.is(v, want[e]));
    for (const b of Object.values(o.buffers)) b.destroy();
  }
  assert.ok(split, 'no case splits k');
  assert.ok(probeMatters, 'no case tells a fused fma from an unfused one');
});

test('a grid past maxComputeWorkgroupsPerDimension runs in pieces of pixels and whole images with the same bits (the limit lowered to 4)', async () => {
  const specs = [
    { n: 3, c: 3, h: 20, w: 15, k: 6, r: 3, s: 3, groups: 1, pad_top: 1, pad_left: 1, bias: true, act: 1 }, // 300 pixels: 2 row pieces
    { layout: ConvLayout.NCHW, n: 3, c: 4, h: 17, w: 17, k: 4, r: 3, s: 3, groups: 2, beta: 0.5 }, // 2 images a piece
    { n: 2, c: 24, h: 6, w: 6, k: 6, r: 3, s: 3, pad_top: 1 }, // split-k: 4 ranges, one image a piece
  ];
  for (const spec of specs) {
    const cut = createConv(device, { mode: 'deterministic' });
    cut.gemm.limits = { ...cut.gemm.limits, maxCount: 4 }; // what the planner reads of maxComputeWorkgroupsPerDimension
    const [x, y] = [convOperands(device, spec), convOperands(device, spec)];
    await convs['f32 deterministic'].run(x.args);
    await cut.run(y.args);
    const [a, b] = [await read(device, x.buffers.y, x.y.length), await read(device, y.buffers.y, y.y.length)];
    a.forEach((v, e) => assert.ok(Object.is(v, b[e]), `${JSON.stringify(spec)}: element ${e}: whole ${v}, pieces ${b[e]}`));
    for (const o of [x, y]) for (const buf of Object.values(o.buffers)) buf.destroy();
    cut.destroy();
  }
  const cut = createConv(device);
  cut.gemm.limits = { ...cut.gemm.limits, maxCount: 4 };
  const o = convOperands(device, { n: 1, c: 40, h: 3, w: 3, k: 6, r: 3, s: 3, groups: 2, pad_top: 1, pad_left: 1 });
  assert.throws(() => cut.describe(o.args), { code: 'unsupported', message: 'conv: 2 groups in 3 split-k ranges exceed the device\'s maxComputeWorkgroupsPerDimension of 4' });
  for (const b of Object.values(o.buffers)) b.destroy();
});

test('the output size formula, and every refused call throws onegpu.h\'s message and writes nothing', async () => {
  assert.deepEqual(convOutputSize({ h: 8, w: 8, r: 3, s: 3, dilation_h: 2 }), [4, 6]);
  assert.deepEqual(convOutputSize({ h: 4, w: 4, r: 6, s: 2, dilation_w: 4 }), [-1, 0]);
  assert.deepEqual(convOutputSize({ h: 10, w: 7, r: 3, s: 3, stride_h: 3, stride_w: 2, pad_top: 2, pad_bottom: 1, pad_left: 5, pad_right: 0 }), [4, 5]);
  const storage = (bytes, usage = GPUBufferUsage.STORAGE) => device.createBuffer({ size: bytes, usage });
  const pattern = new Float32Array(64).map((_, i) => i + 0.5);
  const y = buffer(device, pattern);
  const x = storage(4 * 256), wt = storage(4 * 256);
  // 1 image, C 2, 4x4, K 2, 3x3: y holds 2 x 2 x 2 = 8 floats.
  const good = { n: 1, c: 2, h: 4, w: 4, k: 2, r: 3, s: 3, x, wt, y };
  const cases = [
    [{ r: 6 }, 'conv: output height P (-1) is below 1: the dilated filter (6 x dilation 1) is larger than the padded input (4 + padding 0)'],
    [{ s: 2, dilation_w: 4 }, 'conv: output width Q (0) is below 1: the dilated filter (2 x dilation 4) is larger than the padded input (4 + padding 0)'],
    [{ groups: 3 }, 'conv: groups (3) must divide C (2) and K (2)'],
    [{ stride_h: -1 }, 'conv: stride_h (-1) is negative'],
    [{ stride_w: 70000 }, 'conv: stride_w (70000) is beyond the kernel\'s 65535', 'unsupported'],
    [{ pad_left: -2 }, 'conv: pad_left (-2) is negative'],
    [{ c: 0 }, 'conv: C (0) must be at least 1'],
    [{ k: 2 ** 32 }, 'conv: K (4294967296) exceeds 32-bit indexing'],
    [{ w: 2.5 }, 'conv: w (2.5) is not an integer'],
    [{ layout: 5 }, 'conv: layout 5 is not NHWC or NCHW'],
    [{ weights: 2 }, 'conv: weight layout 2 is not KRSC or KCRS'],
    [{ activation: 4 }, 'conv: activation 4 is not none, ReLU, GELU (erf) or GELU (tanh)'],
    [{ x: null }, 'conv: x is NULL'],
    [{ wt: {} }, 'conv: wt is not a GPUBuffer'],
    [{ n: 20 }, 'conv: x needs 640 elements (offset 0, 1 x 640 with ld 1, batch 1 with stride 0), but its buffer holds 256'],
    [{ y_offset: 60 }, 'conv: y needs 68 elements (offset 60, 1 x 8 with ld 1, batch 1 with stride 0), but its buffer holds 64'],
    [{ bias: storage(4), bias_offset: 0 }, 'conv: bias needs 2 elements (offset 0 + N 2), but its buffer holds 1'],
    [{ x: y }, 'conv: y and x share a GPUBuffer, which WebGPU cannot bind both writable and read-only in one dispatch'],
    [{ bias: y, bias_offset: 40 }, 'conv: y and the bias share a GPUBuffer, which WebGPU cannot bind both writable and read-only in one dispatch'],
    [{ wt: storage(4 * 256, GPUBufferUsage.COPY_DST) }, 'conv: wt\'s GPUBuffer lacks GPUBufferUsage.STORAGE'],
  ];
  const conv = convs['f32 fast'];
  const encoder = device.createCommandEncoder();
  for (const [change, message, code = 'invalid-argument'] of cases) {
    const args = { ...good, ...change };
    assert.throws(() => conv.encode(encoder, args), { message, code }, JSON.stringify(change));
    await assert.rejects(conv.run(args), { message, code });
  }
  assert.throws(() => createConv(device, { dtype: 'f8' }), { message: 'conv: input type f8 is not f32, f16 or bf16 (WebGPU runs the portable float kernels)' });
  assert.throws(() => createConv(device, { mode: 'exact' }), { message: 'conv: mode exact is not \'fast\' or \'deterministic\'' });
  device.queue.submit([encoder.finish()]);
  const got = await read(device, y, 64);
  assert.ok(got.every((v, i) => v === pattern[i]), 'a refused call wrote y');
  // The good call itself runs (so the refusals above are the changes' alone) and writes y.
  await conv.run(good);
  assert.ok((await read(device, y, 8)).some((v, i) => v !== pattern[i]), 'the good call wrote nothing');
});
