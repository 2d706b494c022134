// Whether the device's WGSL fma() rounds once (fused) and whether it
// contracts a product and a sum written as two statements: what the
// Deterministic mode's bit-for-bit promise rests on (README.md, "Rounding").
// A tiny kernel of its own: nothing of the GEMM is involved.

const wgsl = `
@group(0) @binding(0) var<storage, read_write> v: array<f32, 5>;
@compute @workgroup_size(1)
fn main() {
    v[3] = fma(v[0], v[1], v[2]);
    let p = v[0] * v[1];
    v[4] = p + v[2];
}`;

/**
 * Runs the probe on device: fma(x, x, -(1 + 2^-11)) for x = 1 + 2^-12,
 * whose exact value 2^-24 survives one rounding and becomes 0 with two.
 * Returns {fused, contracts}: fused when fma() rounds once, contracts when
 * `let p = a * b; p + c` rounds once too (then no WGSL source keeps the
 * documented rounding, and Deterministic mode promises no bits).
 */
export async function probeFma(device) {
  const x = 1 + 2 ** -12;
  const data = new Float32Array([x, x, -(1 + 2 ** -11), 0, 0]);
  const buffer = device.createBuffer({ size: 32, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC, mappedAtCreation: true });
  new Float32Array(buffer.getMappedRange()).set(data);
  buffer.unmap();
  const read = device.createBuffer({ size: 32, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const pipe = device.createComputePipeline({ layout: 'auto', compute: { module: device.createShaderModule({ code: wgsl }), entryPoint: 'main' } });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipe);
  pass.setBindGroup(0, device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer } }] }));
  pass.dispatchWorkgroups(1);
  pass.end();
  encoder.copyBufferToBuffer(buffer, 0, read, 0, 32);
  device.queue.submit([encoder.finish()]);
  await read.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(read.getMappedRange().slice(0));
  read.destroy();
  buffer.destroy();
  return { fused: out[3] !== 0, contracts: out[4] !== 0 };
}
