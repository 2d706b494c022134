// Every WGSL kernel of a spread of tile configurations, and the low-bit
// decode kernels, pass Dawn's validation (the null backend: parses,
// resolves and builds the pipeline without running it), and ogtune refuses
// what WGSL does not cover.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openDevice, pipeline } from './gpu.js';
import { generate, refusal, space, tile } from './kernels.js';

let device;
before(async () => { device = await openDevice('null'); });
after(() => device?.destroy());

const tiles = [
  tile(),
  tile({ acc: 'chain', pad: 0 }),
  tile({ load: 'direct', pad: 0 }),
  tile({ load: 'direct', acc: 'chain', pad: 0 }),
  tile({ bm: 64, bn: 64, tm: 4, tn: 4 }),
  tile({ bm: 64, bn: 32, bk: 32, tm: 8, tn: 4, wgx: 8, wgy: 8, load: 'direct', pad: 0 }),
  tile({ bm: 128, bn: 64, bk: 16, tm: 8, tn: 4, wgx: 16, wgy: 16, pad: 0 }),
];

for (const [n, params] of tiles.entries()) {
  for (const dtype of ['f32', 'f16', 'bf16']) {
    test(`tile ${n} (${params.load}, ${params.acc}, ${params.bm}x${params.bn}x${params.bk}) ${dtype}: gemm and planes, all op(A) x op(B)`, async () => {
      for (const kernel of ['gemm', 'planes']) for (const transA of [false, true]) for (const transB of [false, true]) {
        await pipeline(device, generate({ params, dtype, transA, transB, kernel }));
      }
    });
  }
}

test('the split-k reduction and the elementwise kernels (scale, bias, activate)', async () => {
  for (const kernel of ['reduce', 'scale', 'bias', 'activate']) await pipeline(device, generate({ kernel }));
});

test('the convolution\'s gathering tile and planes (staged and direct loads, blocked and chain), every dtype and layout pair, and its reduction', async () => {
  const convTiles = [tiles[0], tiles[3], tiles[4]];
  let n = 0;
  for (const dtype of ['f32', 'f16', 'bf16']) for (const conv of ['nhwc,krsc', 'nhwc,kcrs', 'nchw,krsc', 'nchw,kcrs']) {
    const params = convTiles[n++ % convTiles.length]; // each tile meets every dtype and every layout pair
    for (const kernel of ['gemm', 'planes']) await pipeline(device, generate({ params, dtype, kernel, conv }));
  }
  for (const conv of ['nhwc,krsc', 'nchw,krsc']) await pipeline(device, generate({ kernel: 'reduce', conv }));
});

test('few rows: a spread of cols x slices, B K x N and N x K', async () => {
  for (const [cols, slices] of [[8, 32], [16, 16], [32, 8], [4, 64], [128, 2], [2, 128]]) {
    for (const transB of [false, true]) {
      await pipeline(device, generate({ params: { variant: 'fewrows', cols, slices, vec: 1 }, transB }));
    }
  }
});

test('every kernel of the quick space (WebGPU\'s limits), every op(A) x op(B), passes Dawn\'s validation', async () => {
  let generated = 0;
  for (const transA of [false, true]) for (const transB of [false, true]) {
    for (const k of space({ transA, transB })) {
      if (k.refused) {
        assert.match(k.refused, /^wgsl: vec=4/, `${k.params}: only vector loads are refused`);
        continue;
      }
      await pipeline(device, k.text).catch((e) => assert.fail(`${k.kernel} ${k.dtype} ${k.params} ${transA} ${transB}: ${e.message}`));
      generated++;
    }
  }
  // 311 on 2026-12-07: float16 and bfloat16 at 1x768x768 list the decode
  // kernel's quick space, 16-byte loads only (refused; gemm.test.js runs its
  // word loads).
  assert.ok(generated >= 300, `${generated} kernels`);
});

test('the low-bit decode kernel: every kind of weight format x A f32, f16, bf16 x rows 1 and 16 (2, 4, 8 for some), a spread of columns x slices, and 2 and 4 units a trip', async () => {
  const formats = ['mxfp4', 'nvfp4', 'q8_0', 'q4_k', 'q6_k', ...['f16', 'bf16'].flatMap((s) => ['none', 'uint4', 'float'].map((z) => `int4:${s}:${z}`))];
  for (const [n, weights] of formats.entries()) for (const dtype of ['f32', 'f16', 'bf16']) {
    // The rows differ only in copies of the same statements: each middle count meets three formats.
    for (const rows of [1, 16, 2 ** (1 + (n % 3))]) {
      await pipeline(device, generate({ params: { variant: 'qdecode', rows, cols: 4, slices: 32, vec: 1 }, dtype, weights }));
    }
  }
  for (const [cols, slices] of [[1, 32], [2, 128], [8, 16], [64, 4]]) {
    await pipeline(device, generate({ params: { variant: 'qdecode', rows: 2, cols, slices, vec: 1 }, weights: 'int4:g128:uint4' }));
  }
  for (const [unroll, weights] of [[2, 'nvfp4'], [4, 'int4:g128:float']]) {
    await pipeline(device, generate({ params: { variant: 'qdecode', rows: 2, cols: 4, slices: 32, vec: 1, unroll }, dtype: 'f16', weights }));
  }
});

test('the low-bit prefill tile (the default tile, unsplit, decoding W as it loads it): every kind of weight format, A f32, f16 and bf16 in turn', async () => {
  const formats = ['mxfp4', 'nvfp4', 'q8_0', 'int4:f16:none', 'int4:bf16:uint4', 'int4:f16:float', 'q4_k', 'q6_k'];
  for (const [i, weights] of formats.entries()) {
    const dtype = ['f32', 'f16', 'bf16'][i % 3];
    await pipeline(device, generate({ params: tile({ bm: 64, bn: 64, tm: 4, tn: 4, pad: 0 }), dtype, weights, transB: true }));
  }
});

test('ogtune refuses the low-bit kernels WGSL does not cover: the decode kernel\'s vector loads and split-k', () => {
  const decode = (changes) => ({ variant: 'qdecode', rows: 1, cols: 4, slices: 32, vec: 1, ...changes });
  const cases = [
    [{ params: decode({ vec: 4 }), weights: 'mxfp4' }, /^ogtune gen: wgsl: vec=4: the WGSL decode kernel reads A and the weights as 32-bit words \(vec=1\)/],
    [{ params: decode({ split: 4 }), weights: 'nvfp4' }, /wgsl: split=4: the decode kernel's split-k ranges are GLSL only/],
    [{ params: decode(), weights: 'q8_0', kernel: 'planes' }, /wgsl: the decode kernel's split-k pass \(--kernel planes\) is GLSL only/],
    [{ params: decode({ cols: 16, slices: 32 }), weights: 'mxfp4' }, /512 invocations per workgroup exceed WebGPU's default/],
  ];
  for (const [options, message] of cases) assert.match(refusal(options) ?? 'generated', message);
});

test('ogtune refuses what the WGSL tile does not cover, and WebGPU\'s default limits', () => {
  const cases = [
    [{ params: tile({ load: 'direct', pad: 0, vec: 4, tm: 4, tn: 4, bm: 64, bn: 64 }) }, /wgsl: vec=4/],
    [{ params: tile({ src: 'texel' }) }, /wgsl: src=texel/],
    [{ params: tile({ src: 'addr' }) }, /wgsl: src=addr/],
    [{ params: { variant: 'fewrows', cols: 16, slices: 16, vec: 4 } }, /wgsl: vec=4/],
    [{ params: { variant: 'fewrows', cols: 16, slices: 16, vec: 1 }, dtype: 'f16' }, /few-rows kernel takes float32/],
    [{ params: { variant: 'coopmat', bm: 64, bn: 64, bk: 16, sgx: 4, sgy: 2, pad: 8, load: 'staged' }, dtype: 'f16' }, /wgsl: the gemm_coopmat kernel is not written in WGSL/],
    [{ params: tile({ bm: 128, bn: 128, tm: 4, tn: 4, wgx: 32, wgy: 32, pad: 0 }) }, /1024 invocations .* maxComputeInvocationsPerWorkgroup \(256\)/],
    [{ params: tile({ bm: 128, bn: 128, bk: 32, tm: 8, tn: 8, pad: 0 }) }, /32768 bytes of workgroup memory .* \(16384\)/],
    [{ params: tile({ pad: 1, load: 'direct' }) }, /pad=1 must be 0\.\.8, and 0 for direct loads/],
    [{ params: tile(), conv: 'nhwc,krsc', transA: true }, /gen: a convolution runs the portable tile \(src=ssbo or texel, B transposed\)/],
    [{ params: tile({ load: 'direct', pad: 0, vec: 4, tm: 4, tn: 4, bm: 64, bn: 64 }), conv: 'nchw,kcrs' }, /wgsl: vec=4/],
    [{ params: tile(), conv: 'nhwc,ckrs' }, /--conv takes the input layout and the weights' layout/],
  ];
  for (const [options, message] of cases) assert.match(refusal(options) ?? 'generated', message);
});
