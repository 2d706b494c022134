// onegpu for WebGPU: the GEMM of runtime/onegpu.h on a page's GPUDevice,
//
//     C = act(alpha * op(A) * op(B) + beta * C + bias)
//
// for `batch` products, with onegpu's generated WGSL kernels (the portable
// tile, split-k planes and their reduction, few rows, the elementwise
// kernels; kernels.generated.js, written by the build from the templates).
// README.md beside this file is the manual.
import table from './kernels.generated.js';
import { checkElementwise, checkGemm, limitsOf, refuse } from './check.js';
import { EPI_BIAS, kernelUnfit, planElementwise, planGemm, pushOf } from './plan.js';
import { record } from './encode.js';
import { SCRATCH_BYTES, fewRowsEligible } from './rules.js';
import { chooseKernel } from './select.js';

export { probeFma } from './probe.js';

/** og_activation: the epilogue's activation, args.activation. */
export const Activation = Object.freeze({ NONE: 0, RELU: 1, GELU_ERF: 2, GELU_TANH: 3 });

/** og_elementwise: the standalone epilogue kernels of encodeElementwise and runElementwise. */
export const Elementwise = Object.freeze({ BIAS: 0, ACTIVATION: 1 });

const elementBytes = { f32: 4, f16: 2, bf16: 2 };

/**
 * What encode and encodeElementwise return: destroys the uniform buffers the
 * recorded call made (WebGPU allows destroying a buffer twice).
 */
function releaser(uniforms) {
  return () => {
    for (const u of uniforms) u.destroy();
  };
}

class Gemm {
  constructor(device, dtype, mode, kernels) {
    this.device = device;
    this.dtype = dtype;
    this.mode = mode;
    this.kernels = kernels;
    this.limits = limitsOf(device);
    this.scratch = null;
  }

  /** The checked call and its plan: nothing is recorded when this throws. */
  prepare(args) {
    if (args === null || typeof args !== 'object') refuse('gemm: the arguments are not an object');
    const call = checkGemm(this.limits, elementBytes[this.dtype], args);
    const choice = this.choose(call);
    const plan = planGemm(this.limits, call, choice, this.kernels.reduce, this.kernels.elementwise?.scale, SCRATCH_BYTES / 4);
    return { call, choice, plan };
  }

  /** Few rows by the design's rule (float32, 1 <= M <= 4, A not transposed), else the tile. */
  choose(call) {
    const key = `${this.dtype}.${call.transA ? 'T' : 'N'}${call.transB ? 'T' : 'N'}`;
    const shape = [call.m, call.n, call.k, call.batch];
    const usable = (k) => Object.values(k).every((kernel) => !kernelUnfit(this.limits, kernel));
    const t = this.kernels;
    if (fewRowsEligible(this.dtype, call.m, call.transA)) {
      const fallback = t.fewRowsDefaults[call.transB ? 'T' : call.n >= 8192 ? 'wide' : 'N'];
      return chooseKernel(t, 'gemm_fewrows', key, this.mode, shape, fallback, usable);
    }
    return chooseKernel(t, 'gemm_tile', key, this.mode, shape, t.defaultTile, usable);
  }

  /** The bindings of a call's steps; the split-k scratch is made on first use, as in C. */
  resources(call, plan) {
    if (plan.scratch && !this.scratch) {
      this.scratch = this.device.createBuffer({ size: SCRATCH_BYTES, usage: GPUBufferUsage.STORAGE, label: 'onegpu split-k planes' });
    }
    return { A: call.a, B: call.b, C: call.c, bias: call.bias, scratch: this.scratch && { buffer: this.scratch, offset: 0, size: SCRATCH_BYTES } };
  }

  /**
   * Records the GEMM into the page's GPUCommandEncoder (which the page
   * submits; it keeps the buffers alive until the work is done). args are
   * og_gemm_args's fields, snake_case as in onegpu.h: trans_a, trans_b,
   * m, n, k, batch (0 is 1), alpha, beta, a, b, c (GPUBuffers), lda, ldb,
   * ldc, a_offset, b_offset, c_offset, stride_a, stride_b, stride_c, bias
   * (GPUBuffer of float32 or null), bias_offset, activation (Activation).
   * Sizes, leading dimensions, offsets and strides count elements; float16
   * and bfloat16 elements are the halves of u32 words (element 2w in bits
   * 0-15 of word w, 2w + 1 in bits 16-31). Split-k calls of one object share
   * its scratch: submit them in the order recorded.
   * Throws an Error (code 'invalid-argument' or 'unsupported') naming the
   * dimension, with nothing recorded.
   *
   * Returns release(), which destroys the uniform buffers the call made (one
   * a dispatch; GPUBuffer.destroy()). Call it once the page has submitted
   * the encoder's command buffer: WebGPU keeps a destroyed buffer until the
   * submitted work using it is done, and refuses a submission that uses one
   * destroyed before (a validation error). Never called, they are left to
   * the garbage collector.
   */
  encode(encoder, args) {
    const { call, plan } = this.prepare(args);
    return releaser(record(this.device, encoder, this.kernels.pushFields, plan.steps, this.resources(call, plan)));
  }

  /**
   * Records, submits and waits for the GEMM (args as for encode); throws the
   * same refusals, and a device validation error as an Error.
   */
  async run(args) {
    const { call, plan } = this.prepare(args);
    await this.submit(plan.steps, this.resources(call, plan));
  }

  async submit(steps, resources) {
    const device = this.device;
    device.pushErrorScope('validation');
    const encoder = device.createCommandEncoder();
    const release = releaser(record(device, encoder, this.kernels.pushFields, steps, resources));
    device.queue.submit([encoder.finish()]);
    release();
    const error = await device.popErrorScope();
    await device.queue.onSubmittedWorkDone();
    if (error) throw new Error(`gemm: WebGPU: ${error.message}`);
  }

  /** A checked elementwise call and its one step (og_elementwise_check, then og_elementwise_plan). */
  prepareElementwise(op, args) {
    if (args === null || typeof args !== 'object') refuse('elementwise: the arguments are not an object');
    const call = checkElementwise(this.limits, args);
    if (op !== Elementwise.BIAS && op !== Elementwise.ACTIVATION) refuse(`elementwise: operation ${op} is not bias add or activation`);
    if (op === Elementwise.BIAS && !call.bias) refuse('elementwise: bias add without a bias');
    if (call.empty) return { call, steps: [] };
    // Each kernel does its own part of the epilogue only.
    const push = { ...pushOf(call), epi: op === Elementwise.BIAS ? EPI_BIAS : call.activation };
    const ew = this.kernels.elementwise;
    return { call, steps: planElementwise(this.limits, 'elementwise', op === Elementwise.BIAS ? ew.bias : ew.activate, push) };
  }

  /**
   * Records a standalone epilogue kernel on the M x N region of C of every
   * product in args (m, n, batch, c, ldc, c_offset, stride_c; A, B, K,
   * alpha and beta are ignored), as og_gemm_encode_elementwise:
   * Elementwise.BIAS adds bias[bias_offset + j] to column j,
   * Elementwise.ACTIVATION applies args.activation. They run the fused
   * epilogue's functions, so a GEMM with bias and activation gives the bits
   * of the GEMM without them followed by these two. Throws naming the
   * dimension, with nothing recorded. Returns release(), as encode.
   */
  encodeElementwise(encoder, op, args) {
    const { call, steps } = this.prepareElementwise(op, args);
    return releaser(record(this.device, encoder, this.kernels.pushFields, steps, { C: call.c, bias: call.bias }));
  }

  /** Records, submits and waits for an elementwise kernel (as encodeElementwise). */
  async runElementwise(op, args) {
    const { call, steps } = this.prepareElementwise(op, args);
    await this.submit(steps, { C: call.c, bias: call.bias });
  }

  /**
   * The kernels run would use for args, in one line, as og_gemm_describe:
   * "gemm_tile bm=64,... (default); 3 k ranges of 64".
   */
  describe(args) {
    const { call, choice, plan } = this.prepare(args);
    if (call.k === 0 || call.alpha === 0) {
      return `elementwise scale: C = act(beta * C + bias), A and B not read (${call.k === 0 ? 'K' : 'alpha'} is 0)`;
    }
    const split = plan.ranges > 1 ? `; ${plan.ranges} k ranges of ${plan.rangeLen}` : '';
    return `${choice.template} ${choice.text} (${choice.source})${split}`;
  }

  /** Frees the split-k scratch (no work using it may be pending). */
  destroy() {
    this.scratch?.destroy();
    this.scratch = null;
  }
}

/**
 * A GEMM object for one input type and mode on a GPUDevice (og_gemm_create):
 * dtype 'f32', 'f16' or 'bf16' (A and B; C and the bias are float32), mode
 * 'fast' (tuned records of the kernel table for the nearest shape) or
 * 'deterministic' (the default tile and the documented summation order).
 * kernels: a kernel table (default: the build's kernels.generated.js).
 * The device needs the limits of the kernels it runs: 256 invocations a
 * workgroup for the default tile (WebGPU's default; request it in
 * requiredLimits on a compatibility-mode device).
 */
export function createGemm(device, { dtype = 'f32', mode = 'fast', kernels = table } = {}) {
  if (!(dtype in elementBytes)) refuse(`gemm: input type ${dtype} is not f32, f16 or bf16 (WebGPU runs the portable float kernels)`);
  if (mode !== 'fast' && mode !== 'deterministic') refuse(`gemm: mode ${mode} is not 'fast' or 'deterministic'`);
  return new Gemm(device, dtype, mode, kernels);
}
