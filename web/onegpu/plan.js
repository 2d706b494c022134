// The dispatches of a checked call (runtime/plan/og_gemm_plan.c and
// og_pieces.c): the scale kernel when there is no product, few rows, the
// tile, or split-k's planes of raw range sums and their
// reduction in range order with the epilogue; a grid beyond the device's
// maxComputeWorkgroupsPerDimension runs as pieces of whole row tiles and
// whole products, every piece with the ranges of the whole product. A
// convolution's implicit GEMM (planConv) runs the tile or split-k on the
// gather's kernels, in pieces of whole images.
import { refuse } from './check.js';
import { hasProduct, splitRanges } from './rules.js';

/** Threads of a workgroup of the reduction and the elementwise kernels (OG_ELEMENTWISE_THREADS). */
const ELEMENTWISE_THREADS = 64;
/** pc.epi bit 2: a bias is bound (og_gen.h, OG_EPI_BIAS). */
export const EPI_BIAS = 4;

const ceilDiv = (a, b) => Math.ceil(a / b);

/** Refuses a kernel beyond the device's workgroup limits (og_kernel_check's WebGPU part). */
// The dispatches of one piece q (push constants of its rows and products):
// the product, or split-k's planes of raw range sums and their reduction in
// range order with the epilogue (the GEMM's and the convolution's alike, as
// runtime/plan/og_pieces.c gemm_piece).
function pieceSteps(q, { kernel, reduce, gx, gy, reduceGx, ranges, rangeLen, bias, lim }) {
  if (ranges === 1) return [{ kernel, push: q, grid: [gx, gy, q.batch], bind: { 0: 'A', 1: 'B', 2: 'C', ...bias } }];
  const planeStride = q.batch * q.M * q.N;
  const reducePush = { ...q, plane_stride: planeStride, ranges, step_y: Math.min(q.M, lim.maxCount), step_z: Math.min(q.batch, lim.maxCount) };
  return [
    {
      kernel,
      push: { ...q, off_c: 0, ldc: q.N, stride_c: q.M * q.N, plane_stride: planeStride, range_len: rangeLen, ranges },
      grid: [gx, gy, q.batch * ranges], bind: { 0: 'A', 1: 'B', 2: 'scratch' },
    },
    { kernel: reduce, push: reducePush, grid: [reduceGx, reducePush.step_y, reducePush.step_z], bind: { 0: 'scratch', 2: 'C', ...bias } },
  ];
}

export function checkKernel(lim, op, kernel, what) {
  const why = kernelUnfit(lim, kernel);
  if (why) refuse(`${op}: ${what}: ${why}`, 'unsupported');
}

/** Why the device cannot run kernel ('' when it can). */
export function kernelUnfit(lim, kernel) {
  const [x, y, z] = kernel.workgroupSize;
  const names = ['X', 'Y', 'Z'];
  if (x * y * z > lim.maxInvocations) {
    return `${x * y * z} invocations a workgroup, more than the device's maxComputeInvocationsPerWorkgroup of ${lim.maxInvocations}`;
  }
  for (const [i, v] of [x, y, z].entries()) {
    if (v > lim.maxSize[i]) return `workgroup size ${v} along ${names[i]}, more than the device's maxComputeWorkgroupSize${names[i]} of ${lim.maxSize[i]}`;
  }
  if (kernel.workgroupBytes > lim.maxWorkgroupBytes) {
    return `${kernel.workgroupBytes} bytes of workgroup memory, more than the device's maxComputeWorkgroupStorageSize of ${lim.maxWorkgroupBytes}`;
  }
  return '';
}

function checkGridX(lim, op, n, gx) {
  if (gx > lim.maxCount) {
    refuse(`${op}: N = ${n} needs ${gx} workgroups along x, more than the device's maxComputeWorkgroupsPerDimension of ${lim.maxCount}`, 'unsupported');
  }
}

/** The uniform's values of a call (og_push), before pieces; absent fields are 0. */
export function pushOf(call) {
  return {
    M: call.m, N: call.n, K: call.k, lda: call.lda, ldb: call.ldb, ldc: call.ldc,
    off_a: call.a?.elements ?? 0, off_b: call.b?.elements ?? 0, off_c: call.c.elements,
    stride_a: call.stride_a, stride_b: call.stride_b, stride_c: call.stride_c,
    alpha: call.alpha, beta: call.beta, batch: call.batch, ranges: 1,
    bias_off: call.bias?.elements ?? 0, epi: call.activation | (call.bias ? EPI_BIAS : 0),
  };
}

/**
 * Pieces of rows (rowsPer rows each; aRow elements of A a row) and products
 * (batchPer each), each push with its own M, batch and offsets, in the
 * order of og_plan_piece.
 */
function pieces(push, rowsPer, batchPer, aRow) {
  const out = [];
  const rowPieces = ceilDiv(push.M, rowsPer);
  const count = rowPieces * ceilDiv(push.batch, batchPer);
  for (let i = 0; i < count; i++) {
    const r0 = (i % rowPieces) * rowsPer, b0 = Math.floor(i / rowPieces) * batchPer;
    out.push({
      ...push,
      M: Math.min(push.M - r0, rowsPer), batch: Math.min(push.batch - b0, batchPer),
      off_a: push.off_a + r0 * aRow + b0 * push.stride_a,
      off_b: push.off_b + b0 * push.stride_b,
      off_c: push.off_c + r0 * push.ldc + b0 * push.stride_c,
    });
  }
  return out;
}

/**
 * The steps of a GEMM call: [{kernel, push, grid, bind}] where bind maps
 * a binding number to 'A', 'B', 'C', 'bias' or 'scratch'. choice: the
 * tile, few rows or the decode kernel (select.js); reduce: the reduction kernel; scale: the elementwise
 * scale kernel or null. Returns {steps, ranges, rangeLen, scratch} (scratch:
 * whether the planes need the object's scratch).
 */
export function planGemm(lim, call, choice, reduce, scale, scratchFloats) {
  const none = { steps: [], ranges: 1, rangeLen: call.k, scratch: false };
  const product = hasProduct(call);
  // Nothing to compute: M or N is 0, or no product with beta = 1 and no epilogue (C stays bit for bit).
  if (call.empty || (!product && call.beta === 1 && !call.bias && call.activation === 0)) return none;
  const push = pushOf(call);
  if (!product) return { ...none, steps: planElementwise(lim, 'gemm', scale, { ...push, K: 0 }) };
  const p = choice.params;
  // The tile owns bm x bn of C; the decode kernel p.cols columns of p.rows
  // rows; few rows p.cols columns of every row (og_gemm_plan's untiled cases).
  const tile = p.bm !== undefined;
  const rowBlock = tile ? p.bm : p.rows ?? call.m;
  const { ranges, rangeLen } = tile ? splitRanges(p.split, call.m, call.n, call.k, call.batch, scratchFloats) : { ranges: 1, rangeLen: call.k };
  const kernel = ranges > 1 ? choice.kernels.planes : choice.kernels.gemm;
  checkKernel(lim, 'gemm', kernel, `the ${choice.template} kernel ${choice.text}`);
  const gx = ceilDiv(call.n, tile ? p.bn : p.cols), reduceGx = ceilDiv(call.n, ELEMENTWISE_THREADS);
  checkGridX(lim, 'gemm', call.n, ranges > 1 && reduceGx > gx ? reduceGx : gx);
  if (ranges > lim.maxCount) {
    refuse(`gemm: ${ranges} split-k ranges exceed the device's maxComputeWorkgroupsPerDimension of ${lim.maxCount}`, 'unsupported');
  }
  const steps = [];
  const bias = call.bias ? { 5: 'bias' } : {};
  const rowsPer = lim.maxCount * rowBlock;
  for (const q of pieces(push, rowsPer, Math.floor(lim.maxCount / ranges), call.transA ? 1 : call.lda)) {
    const gy = ceilDiv(q.M, rowBlock);
    steps.push(...pieceSteps(q, { kernel, reduce, gx, gy, reduceGx, ranges, rangeLen, bias, lim }));
  }
  return { steps, ranges, rangeLen, scratch: ranges > 1 };
}

/**
 * The steps of a checked convolution that runs the convolution kernel
 * (runtime/plan/og_conv_plan.c, og_pieces.c): the implicit GEMM of
 * check.js's call.shape on the tile of choice (select.js), its kernels
 * kernels {gemm, planes, reduce} (the gather's, of the call's layouts); the
 * split-k ranges by the GEMM's rule, planes and their reduction as
 * planGemm's. Workgroup z is image * groups + group (times the ranges), so
 * a piece holds whole images: pieces of maxComputeWorkgroupsPerDimension
 * row tiles of output pixels (the kernel counts them from the piece's first,
 * the uniform's zero_b) and of whole images. Returns planGemm's
 * {steps, ranges, rangeLen, scratch}.
 */
export function planConv(lim, call, choice, kernels, scratchFloats) {
  const s = call.shape, p = choice.params;
  const { ranges, rangeLen } = splitRanges(p.split, s.m, s.n, s.k, s.batch, scratchFloats);
  const kernel = ranges > 1 ? kernels.planes : kernels.gemm;
  checkKernel(lim, 'conv', kernel, `the convolution's gemm_tile kernel ${choice.text}`);
  const gx = ceilDiv(s.n, p.bn), reduceGx = ceilDiv(s.n, ELEMENTWISE_THREADS);
  checkGridX(lim, 'conv', s.n, ranges > 1 && reduceGx > gx ? reduceGx : gx);
  const perZ = Math.floor(lim.maxCount / ranges);
  if (perZ < s.groups) {
    refuse(`conv: ${s.groups} groups in ${ranges} split-k ranges exceed the device's maxComputeWorkgroupsPerDimension of ${lim.maxCount}`, 'unsupported');
  }
  const rowsPer = lim.maxCount * p.bm, batchPer = Math.floor(perZ / s.groups) * s.groups;
  const rowPieces = ceilDiv(s.m, rowsPer), count = rowPieces * ceilDiv(s.batch, batchPer);
  const push = call.push;
  const bias = push.epi & EPI_BIAS ? { 5: 'bias' } : {};
  const steps = [];
  for (let i = 0; i < count; i++) {
    const r0 = (i % rowPieces) * rowsPer, b0 = Math.floor(i / rowPieces) * batchPer, image = b0 / s.groups;
    const q = {
      ...push, M: Math.min(s.m - r0, rowsPer), batch: Math.min(s.batch - b0, batchPer),
      off_a: push.off_a + image * push.stride_a, off_c: push.off_c + image * push.stride_c, zero_b: r0,
    };
    const gy = ceilDiv(q.M, p.bm);
    steps.push(...pieceSteps(q, { kernel, reduce: kernels.reduce, gx, gy, reduceGx, ranges, rangeLen, bias, lim }));
  }
  return { steps, ranges, rangeLen, scratch: ranges > 1 };
}

/**
 * One elementwise kernel over the M x N region of C of every product (the
 * push's epi bits set by the caller): workgroups of 64 columns, stepping
 * over rows and products beyond the grid's y and z itself.
 */
export function planElementwise(lim, op, kernel, push) {
  if (!kernel) refuse(`${op}: this kernel table has no elementwise kernels (regenerate it with the build's ogtune)`, 'unsupported');
  checkKernel(lim, op, kernel, 'the elementwise kernel');
  const gx = ceilDiv(push.N, ELEMENTWISE_THREADS);
  checkGridX(lim, op, push.N, gx);
  const q = { ...push, step_y: Math.min(push.M, lim.maxCount), step_z: Math.min(push.batch, lim.maxCount) };
  return [{ kernel, push: q, grid: [gx, q.step_y, q.step_z], bind: { 2: 'C', ...(push.epi & EPI_BIAS ? { 5: 'bias' } : {}) } }];
}


/**
 * The steps of a checked low-bit weight product (check.js checkQGemm;
 * runtime/plan/og_qgemm_plan.c og_qgemm_plan, unsplit): the decode kernel
 * `kernel` of `rows` rows and `cols` columns a workgroup over the grid of
 * column tiles x row tiles x products, in pieces of maxComputeWorkgroupsPerDimension
 * row tiles and products (og_pieces.c, A's rows lda apart). `what` names
 * the kernel in a refusal.
 */
export function planQGemm(lim, call, kernel, rows, cols, what) {
  if (call.empty) return [];
  checkKernel(lim, 'qgemm', kernel, what);
  const gx = ceilDiv(call.n, cols);
  checkGridX(lim, 'qgemm', call.n, gx);
  const bias = call.bias ? { 5: 'bias' } : {};
  return pieces(call.push, lim.maxCount * rows, lim.maxCount, call.lda).map((q) => ({
    kernel, push: q, grid: [gx, ceilDiv(q.M, rows), q.batch], bind: { 0: 'A', 1: 'B', 2: 'C', ...bias },
  }));
}
