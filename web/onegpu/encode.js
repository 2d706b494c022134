// Recording planned steps into a GPUCommandEncoder: one compute pass, a
// pipeline per kernel (made once per device), a uniform buffer per dispatch
// (the Push struct of the templates, binding 6) and a bind group of the
// call's bindings. WebGPU orders the dispatches of a pass (each is its own
// usage scope), so the reduction sees the planes without barriers.

/** Binds a kernel declares but the step leaves unused (no bias, A and B when K = 0): 16 bytes. */
const placeholders = new WeakMap();
const pipelines = new WeakMap();

function placeholder(device) {
  if (!placeholders.has(device)) {
    placeholders.set(device, device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE }));
  }
  return placeholders.get(device);
}

/** The kernel's pipeline and bind group layout (every binding it declares, used or not). */
function pipeline(device, kernel) {
  let cache = pipelines.get(device);
  if (!cache) pipelines.set(device, (cache = new WeakMap()));
  if (!cache.has(kernel)) {
    const layout = device.createBindGroupLayout({
      entries: kernel.bindings.map(([binding, type]) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } })),
    });
    const module = device.createShaderModule({ code: kernel.wgsl });
    const pipe = device.createComputePipeline({
      layout: device.createPipelineLayout({ bindGroupLayouts: [layout] }), compute: { module, entryPoint: 'main' },
    });
    cache.set(kernel, { pipe, layout });
  }
  return cache.get(kernel);
}

/** The uniform of a step: every field of pushFields ([name, 'u32' | 'i32' | 'f32']) in order, 4 bytes each. */
function uniform(device, pushFields, values) {
  const bytes = Math.ceil((4 * pushFields.length) / 16) * 16;
  const buffer = device.createBuffer({ size: bytes, usage: GPUBufferUsage.UNIFORM, mappedAtCreation: true });
  const view = new DataView(buffer.getMappedRange());
  pushFields.forEach(([name, type], n) => {
    const v = values[name] ?? 0;
    if (type === 'f32') view.setFloat32(4 * n, v, true);
    else if (type === 'i32') view.setInt32(4 * n, v, true);
    else view.setUint32(4 * n, v, true);
  });
  buffer.unmap();
  return buffer;
}

/**
 * Records steps ([{kernel, push, grid, bind}], plan.js) into encoder;
 * resources maps 'A', 'B', 'C', 'bias', 'scratch' to {buffer, offset, size}.
 * Makes the pipelines first, so nothing is recorded when one fails to build.
 * Returns the uniform buffers it made, for the caller to destroy once the
 * command buffer is submitted.
 */
export function record(device, encoder, pushFields, steps, resources) {
  if (!steps.length) return [];
  const made = steps.map((s) => pipeline(device, s.kernel));
  const uniforms = [];
  const pass = encoder.beginComputePass({ label: 'onegpu' });
  steps.forEach((s, i) => {
    const u = uniform(device, pushFields, s.push);
    uniforms.push(u);
    const entries = s.kernel.bindings.map(([binding]) => {
      if (binding === 6) return { binding, resource: { buffer: u } };
      const r = s.bind[binding] ? resources[s.bind[binding]] : null;
      return { binding, resource: r ? { buffer: r.buffer, offset: r.offset, size: r.size } : { buffer: placeholder(device) } };
    });
    pass.setPipeline(made[i].pipe);
    pass.setBindGroup(0, device.createBindGroup({ layout: made[i].layout, entries }));
    pass.dispatchWorkgroups(...s.grid);
  });
  pass.end();
  return uniforms;
}
