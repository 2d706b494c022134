// onegpu for WebGPU: the GEMM of runtime/onegpu.h on a page's GPUDevice,
//
//     C = act(alpha * op(A) * op(B) + beta * C + bias)
//
// for `batch` products, and its forward convolution (og_conv_*) as an
// implicit GEMM on the same tile, with onegpu's generated WGSL kernels (the
// portable tile, split-k planes and their reduction, few rows, the
// elementwise kernels, the convolution's gathering tile, the low-bit weight
// decode kernel of og_qgemm_*; kernels.generated.js,
// written by the build from the templates). README.md beside this file is
// the manual.
import table from './kernels.generated.js';
import { checkConv, checkElementwise, checkGemm, checkQGemm, limitsOf, refuse } from './check.js';
import { EPI_BIAS, kernelUnfit, planConv, planElementwise, planGemm, planQGemm, pushOf } from './plan.js';
import { layoutOf, parseQFormat, qformatKey, qformatName } from './qweights.js';
import { record } from './encode.js';
import { SCRATCH_BYTES, decodeEligible, decodeRows, fewRowsEligible } from './rules.js';
import { chooseKernel, parseParams } from './select.js';

export { probeFma } from './probe.js';
export { ConvLayout, ConvWeights, convOutputSize } from './check.js';
export { qweightsLayout } from './qweights.js';

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

  /**
   * Few rows by the design's rule (float32, 1 <= M <= 4, A not transposed),
   * the decode kernel by its own (float16 or bfloat16 at 1 <= M <= 16,
   * float32 at 5..16, A not transposed), else the tile (og_select).
   */
  choose(call) {
    const key = `${this.dtype}.${call.transA ? 'T' : 'N'}${call.transB ? 'T' : 'N'}`;
    const shape = [call.m, call.n, call.k, call.batch];
    const usable = (k) => Object.values(k).every((kernel) => !kernelUnfit(this.limits, kernel));
    const t = this.kernels;
    if (fewRowsEligible(this.dtype, call.m, call.transA)) {
      const fallback = t.fewRowsDefaults[call.transB ? 'T' : call.n >= 8192 ? 'wide' : 'N'];
      return chooseKernel(t, 'gemm_fewrows', key, this.mode, shape, fallback, usable);
    }
    if (decodeEligible(this.dtype, call.m, call.transA)) {
      const fallback = t.decodeDefaults[call.transB ? 'T' : 'N'][decodeRows(call.m)];
      return chooseKernel(t, 'gemm_decode', key, this.mode, shape, fallback, usable);
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

  /** Records, submits and waits for steps; a validation error is thrown as op's. */
  async submit(steps, resources, op = 'gemm') {
    const device = this.device;
    device.pushErrorScope('validation');
    const encoder = device.createCommandEncoder();
    const release = releaser(record(device, encoder, this.kernels.pushFields, steps, resources));
    device.queue.submit([encoder.finish()]);
    release();
    const error = await device.popErrorScope();
    await device.queue.onSubmittedWorkDone();
    if (error) throw new Error(`${op}: WebGPU: ${error.message}`);
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

/** The GEMM a 1x1, stride 1, unpadded, ungrouped NHWC convolution is (og_conv_as_gemm). */
function convAsGemm(a) {
  return {
    trans_b: true, m: a.n * a.h * a.w, n: a.k, k: a.c, batch: 1, alpha: 1, beta: a.beta ?? 0,
    a: a.x, b: a.wt, c: a.y, lda: a.c, ldb: a.c, ldc: a.k, a_offset: a.x_offset ?? 0, b_offset: a.w_offset ?? 0,
    c_offset: a.y_offset ?? 0, bias: a.bias ?? null, bias_offset: a.bias_offset ?? 0, activation: a.activation ?? 0,
  };
}

const convLayoutNames = ['nhwc', 'nchw'], convWeightNames = ['krsc', 'kcrs'];

/** A convolution's record op, as og_conv_op: 'conv:RxS:sHxW:dHxW' (0 counts as 1). */
function convOp(a) {
  const one = (v) => v || 1;
  return `conv:${a.r}x${a.s}:s${one(a.stride_h)}x${one(a.stride_w)}:d${one(a.dilation_h)}x${one(a.dilation_w)}`;
}

class Conv {
  constructor(device, dtype, mode, kernels) {
    this.gemm = new Gemm(device, dtype, mode, kernels); // the type, mode, table, limits and split-k scratch
  }

  /** The checked call, and unless it is empty or the GEMM itself, its tile and plan: nothing is recorded when this throws. */
  prepare(args) {
    if (args === null || typeof args !== 'object') refuse('conv: the arguments are not an object');
    const g = this.gemm;
    const call = checkConv(g.limits, elementBytes[g.dtype], args);
    if (call.shape.empty || call.gemm) return { call, choice: null, plan: null };
    const layouts = `${convLayoutNames[args.layout ?? 0]}.${convWeightNames[args.weights ?? 0]}`;
    const choice = this.choose(call.shape, convOp(args), layouts);
    const conv = g.kernels.conv;
    const tile = conv?.tiles[choice.text.replace(/split=[^,]*/, 'split=rule')]?.[`${g.dtype}.${layouts}`];
    if (!tile) refuse(`conv: this kernel table has no convolution kernel ${choice.text} for ${g.dtype} ${layouts} (regenerate it with the build's ogtune)`, 'unsupported');
    const kernels = { ...tile, reduce: conv.reduce[convLayoutNames[args.layout ?? 0]] };
    return { call, choice, plan: planConv(g.limits, call, choice, kernels, SCRATCH_BYTES / 4) };
  }

  /**
   * The tile of a convolution (og_select_conv): in Fast mode the table's
   * record of the convolution's own op (convOp) and layouts for the
   * implicit GEMM's shape, exact else nearest (record 'conv'); else the
   * tile the GEMM chooses for that shape with B transposed (record 'gemm';
   * where the GEMM would take few rows, the default tile); else the default.
   */
  choose(shape, op, layouts) {
    const g = this.gemm;
    const t = g.kernels;
    const dims = [shape.m, shape.n, shape.k, shape.batch];
    const usable = (k) => Object.values(k).every((kernel) => !kernelUnfit(g.limits, kernel));
    const own = chooseKernel(t, 'conv', `${g.dtype}.${op}.${layouts}`, g.mode, dims, t.defaultTile, usable, `${g.dtype}.${layouts}`);
    if (own.source !== 'default') return { ...own, record: 'conv' };
    if (fewRowsEligible(g.dtype, shape.m, false)) {
      return { template: 'gemm_tile', text: t.defaultTile, params: parseParams(t.defaultTile), source: 'default', fewRows: true };
    }
    return { ...chooseKernel(t, 'gemm_tile', `${g.dtype}.NT`, g.mode, dims, t.defaultTile, usable), record: 'gemm' };
  }

  /** The bindings of a call's steps: x, wt and y as the GEMM's A, B and C. */
  resources(call, plan) {
    const { x, wt, y, bias } = call.bindings;
    return this.gemm.resources({ a: x, b: wt, c: y, bias }, plan);
  }

  /**
   * Records the convolution into the page's GPUCommandEncoder, as
   * Gemm.encode records a GEMM (x and wt read, y written; split-k calls of
   * one object share its scratch: submit them in the order recorded).
   * args are og_conv_args's fields, snake_case as in onegpu.h: layout
   * (ConvLayout.NHWC or NCHW, of x and y), weights (ConvWeights.KRSC or
   * KCRS, of wt), n, c, h, w (images, input channels, height, width), k, r,
   * s (output channels, filter height and width), groups, stride_h,
   * stride_w, dilation_h, dilation_w (0 is 1), pad_top, pad_bottom,
   * pad_left, pad_right, beta, x, wt, y (GPUBuffers), x_offset, w_offset,
   * y_offset, bias (GPUBuffer of K float32 values or null), bias_offset,
   * activation (Activation). Offsets count elements; x and wt are of the
   * object's type (float16 and bfloat16 as halves of u32 words), y and the
   * bias float32; y is P x Q (convOutputSize) in the input's layout.
   * Throws an Error (code 'invalid-argument' or 'unsupported') naming the
   * dimension, with nothing recorded. Returns release(), as Gemm.encode.
   */
  encode(encoder, args) {
    const { call, plan } = this.prepare(args);
    if (call.gemm) return this.gemm.encode(encoder, convAsGemm(args));
    if (!plan) return releaser([]);
    const g = this.gemm;
    return releaser(record(g.device, encoder, g.kernels.pushFields, plan.steps, this.resources(call, plan)));
  }

  /** Records, submits and waits for the convolution (args as for encode); throws as encode, and a device validation error. */
  async run(args) {
    const { call, plan } = this.prepare(args);
    if (call.gemm) return this.gemm.run(convAsGemm(args));
    if (plan) await this.gemm.submit(plan.steps, this.resources(call, plan), 'conv');
  }

  /**
   * The kernels run would use for args, in one line, as og_conv_describe:
   * "conv NCHW KCRS, implicit GEMM 3000x384x240 x 1 products: gemm_tile bm=64,... (default)".
   */
  describe(args) {
    const { call, choice, plan } = this.prepare(args);
    const s = call.shape;
    if (s.empty) return 'nothing to compute (no image or no output channel)';
    if (call.gemm) {
      const g = convAsGemm(args);
      return `1x1 convolution as a GEMM ${g.m}x${g.n}x${g.k}: ${this.gemm.describe(g)}`;
    }
    const record = choice.record === 'conv' ? 'the convolution\'s record' : 'the GEMM\'s record';
    const source = choice.fewRows ? 'default: the GEMM\'s choice is not the tile'
      : { default: 'default', db: record, 'db, nearest shape': `${record}, nearest shape` }[choice.source];
    const split = plan.ranges > 1 ? `; ${plan.ranges} k ranges of ${plan.rangeLen}` : '';
    return `conv ${(args.layout ?? 0) ? 'NCHW' : 'NHWC'} ${(args.weights ?? 0) ? 'KCRS' : 'KRSC'}, implicit GEMM ${s.m}x${s.n}x${s.k} x ${s.batch} products: gemm_tile ${choice.text} (${source})${split}`;
  }

  /** Frees the split-k scratch (no work using it may be pending). */
  destroy() {
    this.gemm.destroy();
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

/**
 * A convolution object for one input type and mode on a GPUDevice
 * (og_conv_create): forward convolution (cross-correlation), 1-D and 2-D,
 * as onegpu.h defines it, on the GEMM's portable tile with A gathered from
 * the input (README.md, "Convolution"). dtype, mode and kernels as for
 * createGemm: in Fast mode the tile is the GEMM's tuned record for the
 * implicit GEMM's shape (B transposed), in Deterministic mode the default,
 * summed in the documented order (docs/accumulation-order.md, "Convolution").
 */
export function createConv(device, { dtype = 'f32', mode = 'fast', kernels = table } = {}) {
  if (!(dtype in elementBytes)) refuse(`conv: input type ${dtype} is not f32, f16 or bf16 (WebGPU runs the portable float kernels)`);
  if (mode !== 'fast' && mode !== 'deterministic') refuse(`conv: mode ${mode} is not 'fast' or 'deterministic'`);
  return new Conv(device, dtype, mode, kernels);
}

/** The decode kernel's rows a workgroup for M (og_params_qdecode): the power of two from 1 to 16 that covers M. */
function qdecodeRows(m) {
  let rows = 1;
  while (rows < 16 && rows < m) rows *= 2;
  return rows;
}

class QGemm {
  constructor(device, dtype, mode, format, f, dot, kernels) {
    this.gemm = new Gemm(device, dtype, mode, kernels); // the type, mode, table and limits
    this.format = format;
    this.f = f;
    this.dot = dot;
  }

  /**
   * The checked call and its steps, as og_qgemm_default chooses in either
   * mode: up to 16 rows og_params_qdecode's shape (4 columns of 32 k
   * slices) with word loads (vec=1, WGSL's), ROWS the power of two that
   * covers M, with the object's dot (the integer path) where it is not 0;
   * above 16 the prefill tile (og_params_qprefill: the default 64 x 64
   * tile, unsplit, decoding each weight as it loads it). Nothing is
   * recorded when this throws.
   */
  prepare(args) {
    if (args === null || typeof args !== 'object') refuse('qgemm: the arguments are not an object');
    const g = this.gemm;
    const call = checkQGemm(g.limits, elementBytes[g.dtype], this.f, layoutOf, args);
    const prefill = call.m > 16;
    const rows = prefill ? 64 : qdecodeRows(call.m);
    const text = prefill ? g.kernels.qprefill : `variant=qdecode,rows=${rows},cols=4,slices=32,vec=1${this.dot ? `,dot=${this.dot}` : ''}`;
    const template = prefill ? 'gemm_tile' : 'qgemm_decode';
    const key = `${g.dtype}.${qformatKey(this.f)}`;
    const kernel = text && g.kernels.qgemm?.[text]?.[key];
    if (!call.empty && !kernel) refuse(`qgemm: this kernel table has no ${prefill ? 'prefill tile' : 'decode kernel'} ${text} for ${key} (regenerate it with the build's ogtune)`, 'unsupported');
    const steps = planQGemm(g.limits, call, kernel, rows, prefill ? 64 : 4, `the ${template} kernel ${text}`);
    return { call, text, template, steps };
  }

  /** The bindings of a call's steps: W as the GEMM's B. */
  resources(call) {
    return { A: call.a, B: call.w, C: call.c, bias: call.bias };
  }

  /**
   * Records the product C = act(A * W^T + beta * C + bias) into the page's
   * GPUCommandEncoder, as Gemm.encode records a GEMM. args are
   * og_qgemm_args's fields, snake_case as in onegpu.h: m, n, k, batch (0 is
   * 1), a (GPUBuffer of the object's type, M x K row-major), lda, a_offset,
   * stride_a (elements), w (GPUBuffer holding the images in
   * onegpu_formats.h's layout: qweightsLayout), w_offset, stride_w (bytes,
   * multiples of 16; stride_w between the experts' images, 0 shares one),
   * tensor_scale (NVFP4's float32 per tensor; 0 is 1), c (float32), ldc,
   * c_offset, stride_c, beta, bias (N float32 values from bias_offset, or
   * null), bias_offset, activation (Activation). No alpha.
   * Throws an Error (code 'invalid-argument' or 'unsupported') naming the
   * dimension, with nothing recorded. Returns release(), as Gemm.encode.
   */
  encode(encoder, args) {
    const { call, steps } = this.prepare(args);
    const g = this.gemm;
    return releaser(record(g.device, encoder, g.kernels.pushFields, steps, this.resources(call)));
  }

  /** Records, submits and waits for the product (args as for encode); throws as encode, and a device validation error. */
  async run(args) {
    const { call, steps } = this.prepare(args);
    if (steps.length) await this.gemm.submit(steps, this.resources(call), 'qgemm');
  }

  /**
   * The kernel run would use for args, in one line, as og_qgemm_describe
   * (the record op, template, parameters and source): "qgemm:mxfp4
   * qgemm_decode variant=qdecode,rows=1,cols=4,slices=32,vec=1 (default)",
   * above 16 rows "qgemm:mxfp4 gemm_tile bm=64,... (default)", then the
   * pieces of a large grid.
   */
  describe(args) {
    const { call, text, template, steps } = this.prepare(args);
    if (call.empty) return 'nothing to compute (M or N is 0)';
    const source = this.gemm.mode === 'deterministic' ? 'default, Deterministic mode' : 'default';
    return `qgemm:${qformatName(this.f)} ${template} ${text} (${source})${steps.length > 1 ? `; ${steps.length} pieces` : ''}`;
  }

  /** Nothing to free: the decode kernel and the prefill tile need no scratch (kept for the objects' common shape). */
  destroy() {}
}

/**
 * A low-bit weight product object on a GPUDevice (og_qgemm_create): C =
 * act(A * W^T + beta * C + bias) with W an N x K matrix of weights in
 * onegpu's layout (runtime/onegpu_formats.h, "Low-bit weight matrices";
 * qweightsLayout gives its planes) and A float32, float16 or bfloat16 (dtype
 * 'f32', 'f16' or 'bf16'; C and the bias float32). format: the format's text
 * as ogtune's --weights takes it: 'mxfp4', 'nvfp4', 'q8_0', 'q4_k', 'q6_k'
 * or 'int4[:gN|:gc][:f16|:bf16][:none|:uint4|:float]'. mode 'fast' or
 * 'deterministic': the same default decode kernel either way (WebGPU has no
 * tuned records for it), summed in the order of docs/accumulation-order.md,
 * "Low-bit weights". dot (Fast mode only, up to 16 rows): 0 the float path;
 * 1 or 2 the integer path of docs/decode.md (A quantised per block of 32 to
 * int8 with one scale; its error bound is stated there), 1 with WGSL's
 * dot4I8Packed (the language feature packed_4x8_integer_dot_product), 2
 * with its emulation in 32-bit products; its kernels are in a table
 * generated with --integer-path (tools/generate-kernels.js). kernels as for
 * createGemm.
 */
export function createQGemm(device, { dtype = 'f32', format, mode = 'fast', dot = 0, kernels = table } = {}) {
  if (!(dtype in elementBytes)) refuse(`qgemm: input type ${dtype} is not f32, f16 or bf16`);
  if (mode !== 'fast' && mode !== 'deterministic') refuse(`qgemm: mode ${mode} is not 'fast' or 'deterministic'`);
  if (dot !== 0 && dot !== 1 && dot !== 2) refuse(`qgemm: dot ${dot} is 0 (the float path), 1 (int8 activations, dot4I8Packed) or 2 (int8 activations, emulated)`);
  if (dot && mode !== 'fast') refuse(`qgemm: dot=${dot} (the integer path, int8 activations) runs in Fast mode only; Deterministic mode keeps the float path and its documented order`, 'unsupported');
  const f = parseQFormat(format);
  if (!f) refuse(`qgemm: weight format ${format} is not mxfp4, nvfp4, q8_0, q4_k, q6_k or int4[:gN|:gc][:f16|:bf16][:none|:uint4|:float]`);
  return new QGemm(device, dtype, mode, format, f, dot, kernels);
}
