// The page's cases: float32 split-k, float16 as pairs in u32 words (odd
// offsets), few rows, the decode kernel (float16, B N x K), a float16 convolution, an NVFP4 low-bit weight
// product (float16 A, experts; small integers bit for bit), and Deterministic mode's bits
// against the documented order, through the same module a page imports
// (../onegpu/onegpu.js) and the Node.js tests' harness (../test/runtime.js,
// ../test/conv.js, ../test/qgemm.js).
import { ConvLayout, ConvWeights, createConv, createGemm, createQGemm, probeFma, qweightsLayout } from '../onegpu/onegpu.js';
import { parseQFormat } from '../onegpu/qweights.js';
import { splitRanges } from '../onegpu/rules.js';
import { convOperands, runConvCase } from '../test/conv.js';
import { referenceOrdered } from '../test/ordered.js';
import { qOperands, runQCase } from '../test/qgemm.js';
import { operands, read, release, runCase } from '../test/runtime.js';

const log = (tag, value) => {
  const line = `${tag} ${JSON.stringify(value)}`;
  console.log(line);
  document.getElementById('log').textContent += `${line}\n`;
};

// Few enough kernels to stay near a minute: SwiftShader takes seconds to
// build each pipeline. The split-k case is the float32 case; Deterministic
// mode runs the float16 case's kernel again.
const cases = [
  ['float32 split-k 40x70x1000, offsets, batch 2 sharing B, beta, bias and GELU', 'f32',
    { M: 40, N: 70, K: 1000, batch: 2, strideB: 0, offA: 3, offC: 5, alpha: 1.5, beta: -0.5, bias: true, act: 2 }],
  ['float16 pairs 65x63x100, odd offsets, beta = 0 over NaN', 'f16', { M: 65, N: 63, K: 100, offA: 1, offB: 3, cFill: NaN }],
  ['few rows float32 3x200x300, batch 2 sharing B, offsets', 'f32', { M: 3, N: 200, K: 300, batch: 2, strideB: 0, offA: 1, offC: 2, beta: 0.5 }],
  ['decode kernel float16 8x300x500, B N x K as models ship it, offsets, bias', 'f16', { M: 8, N: 300, K: 500, transB: true, offA: 1, offB: 3, beta: 0.5, bias: true }],
];
// NCHW with KCRS weights (PyTorch's), two groups, padding wider than the
// filter on the left; one kernel (no split-k: the float32 case splits).
const conv = ['convolution float16 NCHW KCRS, 2 groups, stride 2, left padding 4 wider than the filter, bias and ReLU', 'f16',
  { layout: ConvLayout.NCHW, weights: ConvWeights.KCRS, n: 2, c: 12, h: 9, w: 8, k: 12, r: 3, s: 3, groups: 2, stride_w: 2,
    pad_top: 1, pad_bottom: 1, pad_left: 4, pad_right: 1, xOff: 1, yOff: 3, beta: 0.5, bias: true, act: 1 }];
// Low-bit weights: one decode kernel (4 rows), a random and an integer case.
const qgemm = ['low-bit weights NVFP4 x float16 A 3x40x256, 2 experts, tensor scale, bias and GELU; small integers bit for bit', 'nvfp4',
  { dtype: 'f16', m: 3, n: 40, k: 256, batch: 2, tensorScale: 0.75, beta: 0.5, bias: true, act: 2, aOffset: 1 }];
const deterministic = { dtype: 'f16', M: 65, N: 63, K: 100, offA: 1, offB: 3, batch: 2, beta: 0.5, bias: true, act: 1 };

async function main() {
  const adapter = await navigator.gpu?.requestAdapter();
  if (!adapter) throw new Error('no WebGPU adapter');
  const device = await adapter.requestDevice();
  const info = adapter.info ?? {};
  for (const [name, dtype, spec] of cases) {
    const gemm = createGemm(device, { dtype });
    const description = gemm.describe(operands(device, { dtype, ...spec }).args);
    const r = await runCase(device, gemm, { dtype, ...spec });
    log('ONEGPU-RESULT', { name, ok: r.ok, maxErr: r.maxErr, maxRef: r.maxRef, bound: r.bound, outside: r.outside.length, nonFinite: r.nonFinite.length, description });
  }
  {
    const [name, dtype, spec] = conv;
    const c = createConv(device, { dtype });
    const o = convOperands(device, { dtype, ...spec });
    const description = c.describe(o.args);
    for (const b of Object.values(o.buffers)) b.destroy();
    const r = await runConvCase(device, c, { dtype, ...spec });
    log('ONEGPU-RESULT', { name, ok: r.ok, maxErr: r.maxErr, maxRef: r.maxRef, bound: r.bound, outside: r.outside.length, nonFinite: r.nonFinite.length, description });
  }
  {
    const [name, format, spec] = qgemm;
    const q = createQGemm(device, { dtype: spec.dtype, format });
    const full = { format, ...spec, f: parseQFormat(format), lay: qweightsLayout(format, spec.n, spec.k) };
    const o = qOperands(device, full);
    const description = q.describe(o.args);
    for (const b of Object.values(o.buffers)) b.destroy();
    const r = await runQCase(device, q, full);
    const exact = await runQCase(device, q, { ...full, k: 64, lay: qweightsLayout(format, spec.n, 64), tensorScale: 0, beta: 2, act: 1, integer: true });
    log('ONEGPU-RESULT', { name, ok: !r.bad.length && !r.outside.length && !exact.bad.length && !exact.outside.length && exact.exact, bad: r.bad, outside: r.outside.length, exactBad: exact.bad, exact: exact.exact, description });
  }
  // Deterministic mode against the documented order, fused or not as probed.
  const fma = await probeFma(device);
  const o = operands(device, deterministic);
  await createGemm(device, { dtype: 'f16', mode: 'deterministic' }).run(o.args);
  const got = await read(device, o.buffers.c, o.c.length);
  const want = referenceOrdered(o.g, o.A, o.B, o.c, o.bias, fma.fused, splitRanges('rule', 65, 63, 100, 2, 1 << 22));
  release(o);
  const differ = got.reduce((n, x, e) => n + (Object.is(x, want[e]) ? 0 : 1), 0);
  log('ONEGPU-RESULT', { name: 'Deterministic float16, bits of the documented order', ok: differ === 0 && !fma.contracts, differ, fma });
  log('ONEGPU-DONE', { cases: cases.length + 3, adapter: `${info.vendor ?? ''} ${info.architecture ?? ''} ${info.description ?? ''}`.trim() });
}

main().catch((e) => log('ONEGPU-ERROR', String(e?.stack ?? e))).finally(() => window.close());
