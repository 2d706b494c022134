// A kernel table's entry (web/onegpu's kernels.generated.js): one kernel's
// WGSL, as `ogtune gen --emit wgsl` writes it, and what the runtime needs to
// bind and launch it. Used by tools/generate-kernels.js and by the tests
// that run kernels outside the default table.

/** The entry of the kernel whose WGSL is wgsl. */
export function kernelEntry(wgsl) {
  const size = /@workgroup_size\((\d+), (\d+), (\d+)\)/.exec(wgsl).slice(1, 4).map(Number);
  // [binding, its GPUBufferBindingType]: the runtime makes explicit layouts, as
  // 'auto' would leave out a binding the entry point never uses (the planes' bias).
  const types = { uniform: 'uniform', 'storage, read': 'read-only-storage', 'storage, read_write': 'storage' };
  const bindings = [...wgsl.matchAll(/@binding\((\d+)\) var<([^>]+)>/g)].map((m) => [Number(m[1]), types[m[2]]]);
  const workgroupBytes = [...wgsl.matchAll(/var<workgroup> \w+: array<(?:f32|u32|i32), (\d+)>/g)]
    .reduce((sum, m) => sum + 4 * Number(m[1]), 0);
  return { wgsl, workgroupSize: size, workgroupBytes, bindings };
}
