// Runs the generated kernels on a GPUDevice, and the float64 reference.
// C = act(alpha * op(A) * op(B) + beta * C + bias), row-major, sizes and
// offsets in elements; float16 and bfloat16 operands are pairs in u32 words.
import { pushFields, workgroupSize } from './kernels.js';

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

function storage(device, words, extra = 0) {
  const buffer = device.createBuffer({
    size: Math.max(16, words.byteLength), usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST | extra,
    mappedAtCreation: true,
  });
  new Uint32Array(buffer.getMappedRange()).set(words);
  buffer.unmap();
  return buffer;
}

function uniform(device, wgsl, values) {
  const fields = pushFields(wgsl);
  const data = new ArrayBuffer(Math.ceil((4 * fields.length) / 16) * 16);
  const view = new DataView(data);
  fields.forEach(({ name, type }, n) => {
    const v = values[name] ?? 0;
    if (type === 'f32') view.setFloat32(4 * n, v, true);
    else if (type === 'i32') view.setInt32(4 * n, v, true);
    else view.setUint32(4 * n, v, true);
  });
  const buffer = device.createBuffer({ size: data.byteLength, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
  new Uint8Array(buffer.getMappedRange()).set(new Uint8Array(data));
  buffer.unmap();
  return buffer;
}

function bindGroup(device, pipe, buffers) {
  // Only the bindings the kernel uses: the planes pass has no epilogue, so no bias.
  const entries = Object.entries(buffers).map(([binding, buffer]) => ({ binding: Number(binding), resource: { buffer } }));
  return device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries });
}

async function readBack(device, encoder, buffer, size) {
  const out = device.createBuffer({ size, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  encoder.copyBufferToBuffer(buffer, 0, out, 0, size);
  device.queue.submit([encoder.finish()]);
  await out.mapAsync(GPUMapMode.READ);
  const words = new Float32Array(out.getMappedRange().slice(0));
  out.destroy();
  return words;
}

const pushOf = (g) => ({
  M: g.M, N: g.N, K: g.K, lda: g.lda, ldb: g.ldb, ldc: g.ldc, off_a: g.offA, off_b: g.offB, off_c: g.offC,
  stride_a: g.strideA, stride_b: g.strideB, stride_c: g.strideC, alpha: g.alpha, beta: g.beta, batch: g.batch,
  bias_off: 0, epi: (g.act ?? 0) | (g.bias ? 4 : 0),
});

/**
 * Runs problem g with the pipelines of `kernels` ({gemm: {pipe, wgsl, params}},
 * the tile or few rows; for split-k, {planes: {...}, reduce: {...}, ranges,
 * rangeLen}; or {elementwise: {..., kernel}}, the scale, bias or activate
 * kernel on C alone) on operands a, b (u32 words), C's float32 values c and the bias
 * values; returns the whole C buffer afterwards.
 */
export async function run(device, kernels, g, a, b, c, bias) {
  const bufA = storage(device, a), bufB = storage(device, b);
  const bufC = storage(device, new Uint32Array(c.buffer));
  const bufBias = storage(device, new Uint32Array(bias.buffer));
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  const dispatch = (k, push, bufs, x, y, z) => {
    pass.setPipeline(k.pipe);
    pass.setBindGroup(0, bindGroup(device, k.pipe, { ...bufs, 6: uniform(device, k.wgsl, push) }));
    pass.dispatchWorkgroups(x, y, z);
  };
  // Few rows: a workgroup owns `cols` columns of every row; the tile: bm x bn of C.
  const tileGrid = (p) => (p.variant === 'fewrows' ? [Math.ceil(g.N / p.cols), 1] : [Math.ceil(g.N / p.bn), Math.ceil(g.M / p.bm)]);
  // The reduction and the elementwise kernels: LOCAL_X columns, rows and batches in steps.
  const rowsGrid = (k) => [Math.ceil(g.N / workgroupSize(k.wgsl)[0]), Math.min(g.M, 1024), g.batch];
  let planes;
  if (kernels.elementwise) {
    const k = kernels.elementwise, grid = rowsGrid(k);
    const bufs = k.kernel === 'activate' ? { 2: bufC } : { 2: bufC, 5: bufBias }; // the activation reads no bias
    dispatch(k, { ...pushOf(g), step_y: grid[1], step_z: grid[2] }, bufs, ...grid);
  } else if (kernels.gemm) {
    dispatch(kernels.gemm, pushOf(g), { 0: bufA, 1: bufB, 2: bufC, 5: bufBias }, ...tileGrid(kernels.gemm.params), g.batch);
  } else {
    const { ranges, rangeLen } = kernels;
    const stride = g.batch * g.M * g.N;
    planes = device.createBuffer({ size: Math.max(16, 4 * ranges * stride), usage: GPUBufferUsage.STORAGE });
    dispatch(kernels.planes, { ...pushOf(g), off_c: 0, ldc: g.N, stride_c: g.M * g.N, range_len: rangeLen, plane_stride: stride },
      { 0: bufA, 1: bufB, 2: planes }, ...tileGrid(kernels.planes.params), ranges * g.batch);
    const grid = rowsGrid(kernels.reduce);
    dispatch(kernels.reduce, { ...pushOf(g), ranges, plane_stride: stride, step_y: grid[1], step_z: grid[2] },
      { 0: planes, 2: bufC, 5: bufBias }, ...grid);
  }
  pass.end();
  const result = await readBack(device, encoder, bufC, c.byteLength);
  for (const buf of [bufA, bufB, bufC, bufBias, planes]) buf?.destroy();
  return result;
}
