// Runs the generated kernels on a GPUDevice; the problems and their
// float64 reference are problems.js's.
import { pushFields, workgroupSize } from './kernels.js';

export { activations, opA, opB, operand, problem, random, reference, span } from './problems.js';

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
  // Few rows: a workgroup owns `cols` columns of every row; the decode
  // kernel `cols` columns of `rows` rows; the tile: bm x bn of C.
  const tileGrid = (p) => (p.variant === 'fewrows' ? [Math.ceil(g.N / p.cols), 1]
    : p.variant === 'decode' ? [Math.ceil(g.N / p.cols), Math.ceil(g.M / p.rows)] : [Math.ceil(g.N / p.bn), Math.ceil(g.M / p.bm)]);
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
