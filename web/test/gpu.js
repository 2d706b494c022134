// Dawn for Node (npm `webgpu`): a device on the null backend (validates WGSL,
// runs nothing) or on OpenGL (Mesa's llvmpipe here: EGL_PLATFORM=surfaceless).
import { create, globals } from 'webgpu';

Object.assign(globalThis, globals);

// Dawn's instances, kept alive as long as the process: a collected instance
// takes its devices with it.
const instances = [];

/**
 * A GPUDevice on `backend` ('null' or 'opengl'), in compatibility mode,
 * asking for WebGPU's default compute limits (compatibility mode starts at
 * 128 invocations a workgroup) unless `limits` is false.
 */
export async function openDevice(backend, { limits = true } = {}) {
  process.env.EGL_PLATFORM ??= 'surfaceless';
  const gpu = create([`backend=${backend}`]);
  instances.push(gpu);
  const adapter = await gpu.requestAdapter({ featureLevel: 'compatibility' });
  if (!adapter) throw new Error(`Dawn offers no ${backend} adapter`);
  if (!limits) return adapter.requestDevice();
  return adapter.requestDevice({
    requiredLimits: {
      maxComputeInvocationsPerWorkgroup: 256,
      maxComputeWorkgroupSizeX: 256,
      maxComputeWorkgroupSizeY: 256,
      maxComputeWorkgroupStorageSize: 16384,
    },
  });
}

/** A compute pipeline of `wgsl`; throws with Dawn's messages when it is invalid. */
export async function pipeline(device, wgsl) {
  const module = device.createShaderModule({ code: wgsl });
  const info = await module.getCompilationInfo();
  const errors = info.messages.filter((m) => m.type === 'error');
  if (errors.length) throw new Error(errors.map((m) => `${m.lineNum}:${m.linePos} ${m.message}`).join('\n'));
  device.pushErrorScope('validation');
  const p = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
  const error = await device.popErrorScope();
  if (error) throw new Error(error.message);
  return p;
}
