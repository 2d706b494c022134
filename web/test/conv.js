// The convolution's problems and their float64 reference, written from
// runtime/onegpu.h's formulas alone (not from the kernel or the runtime's
// index arithmetic), with nothing of Node.js so the browser page shares
// them: y(p, q, kk) = act(sum over c, r, s of x(h, w, g*Cg + c) *
// wt(kk, r, s, c) + beta * y + bias[kk]), g = kk / Kg, h = p*stride_h +
// r*dilation_h - pad_top, w = q*stride_w + s*dilation_w - pad_left, x = 0 in
// the padding; tensors dense, images one after another, in elements.
import { referenceOrdered } from './ordered.js';
import { activations, operand, random } from './problems.js';
import { bounds, buffer, read } from './runtime.js';

const NCHW = 1, KCRS = 1;

/**
 * A convolution problem with its defaults (1 image, stride, dilation and
 * groups 1, no padding, NHWC with KRSC weights, beta 0) and its output
 * size P x Q from onegpu.h's formula, computed here on its own.
 */
export function convProblem(spec) {
  const t = {
    n: 1, groups: 1, stride_h: 1, stride_w: 1, dilation_h: 1, dilation_w: 1, pad_top: 0, pad_bottom: 0,
    pad_left: 0, pad_right: 0, layout: 0, weights: 0, beta: 0, act: 0, bias: false, xOff: 0, wOff: 0, yOff: 0, ...spec,
  };
  t.P = Math.floor((t.h + t.pad_top + t.pad_bottom - ((t.r - 1) * t.dilation_h + 1)) / t.stride_h) + 1;
  t.Q = Math.floor((t.w + t.pad_left + t.pad_right - ((t.s - 1) * t.dilation_w + 1)) / t.stride_w) + 1;
  t.Cg = t.c / t.groups;
  t.Kg = t.k / t.groups;
  return t;
}

/** Indices of x, wt and y in their arrays (offsets included), as onegpu.h's layouts give them. */
export const xAt = (t, img, c, h, w) => t.xOff + (t.layout === NCHW ? ((img * t.c + c) * t.h + h) * t.w + w : ((img * t.h + h) * t.w + w) * t.c + c);
export const wAt = (t, kk, c, r, s) => t.wOff + (t.weights === KCRS ? ((kk * t.Cg + c) * t.r + r) * t.s + s : ((kk * t.r + r) * t.s + s) * t.Cg + c);
export const yAt = (t, img, kk, p, q) => t.yOff + (t.layout === NCHW ? ((img * t.k + kk) * t.P + p) * t.Q + q : ((img * t.P + p) * t.Q + q) * t.k + kk);

/** The float64 direct convolution with the epilogue: y (the whole buffer's values) changed in place. */
export function convReference(t, x, wt, y, bias) {
  for (let img = 0; img < t.n; img++) for (let kk = 0; kk < t.k; kk++) for (let p = 0; p < t.P; p++) for (let q = 0; q < t.Q; q++) {
    const g = Math.floor(kk / t.Kg);
    let sum = 0;
    for (let c = 0; c < t.Cg; c++) for (let r = 0; r < t.r; r++) for (let s = 0; s < t.s; s++) {
      const h = p * t.stride_h + r * t.dilation_h - t.pad_top, w = q * t.stride_w + s * t.dilation_w - t.pad_left;
      if (h >= 0 && h < t.h && w >= 0 && w < t.w) sum += x[xAt(t, img, g * t.Cg + c, h, w)] * wt[wAt(t, kk, c, r, s)];
    }
    const yi = yAt(t, img, kk, p, q);
    let v = sum + (t.beta !== 0 ? t.beta * y[yi] : 0);
    if (t.bias) v += bias[kk];
    y[yi] = activations[t.act](v);
  }
  return y;
}

/**
 * The documented order on the host (docs/accumulation-order.md,
 * "Convolution"): per image and group, the GEMM of an explicit im2col
 * matrix (row p*Q + q, term kk in the weights' order, 0 in the padding) and
 * the group's weights stored N x K, summed by ordered.js with split
 * ({ranges, rangeLen} of the implicit GEMM). Returns y's buffer after the
 * call as float32 values.
 */
export function convOrdered(t, x, wt, y, bias, fused, split) {
  const out = Float32Array.from(y);
  const M = t.P * t.Q, K = t.Cg * t.r * t.s;
  const term = (kk) => (t.weights === KCRS
    ? { c: Math.floor(kk / (t.r * t.s)), r: Math.floor(kk / t.s) % t.r, s: kk % t.s }
    : { c: kk % t.Cg, r: Math.floor(kk / (t.Cg * t.s)), s: Math.floor(kk / t.Cg) % t.s });
  for (let img = 0; img < t.n; img++) for (let g = 0; g < t.groups; g++) {
    const A = new Float64Array(M * K), B = new Float64Array(t.Kg * K), C = new Float32Array(M * t.Kg);
    for (let i = 0; i < M; i++) for (let kk = 0; kk < K; kk++) {
      const { c, r, s } = term(kk), p = Math.floor(i / t.Q), q = i % t.Q;
      const h = p * t.stride_h + r * t.dilation_h - t.pad_top, w = q * t.stride_w + s * t.dilation_w - t.pad_left;
      A[i * K + kk] = h >= 0 && h < t.h && w >= 0 && w < t.w ? x[xAt(t, img, g * t.Cg + c, h, w)] : 0;
    }
    for (let j = 0; j < t.Kg; j++) for (let kk = 0; kk < K; kk++) {
      const { c, r, s } = term(kk);
      B[j * K + kk] = wt[wAt(t, g * t.Kg + j, c, r, s)];
    }
    for (let i = 0; i < M; i++) for (let j = 0; j < t.Kg; j++) C[i * t.Kg + j] = y[yAt(t, img, g * t.Kg + j, Math.floor(i / t.Q), i % t.Q)];
    const gemm = { M, N: t.Kg, K, batch: 1, alpha: 1, beta: t.beta, transA: false, transB: true, offA: 0, offB: 0, offC: 0,
      lda: K, ldb: K, ldc: t.Kg, strideA: 0, strideB: 0, strideC: 0, bias: t.bias, act: t.act };
    const got = referenceOrdered(gemm, A, B, C, bias.subarray(g * t.Kg), fused, split);
    for (let i = 0; i < M; i++) for (let j = 0; j < t.Kg; j++) out[yAt(t, img, g * t.Kg + j, Math.floor(i / t.Q), i % t.Q)] = got[i * t.Kg + j];
  }
  return out;
}

/**
 * The operands of a convolution spec (convProblem's fields, dtype, yFill:
 * a value for all of y; yExtra elements of y's buffer past y), generated
 * from a seed of the shape: {t, x, wt, y (float32 values of y's buffer),
 * bias, args (og_conv_args's fields), buffers}.
 */
export function convOperands(device, spec) {
  const { dtype = 'f32', yFill = null, yExtra = 5, ...fields } = spec;
  const t = convProblem(fields);
  const rnd = random(t.n * 7919 + t.c * 104729 + t.h * 31 + t.w * 17 + t.k * 3 + t.r + t.groups * 13);
  const x = operand(dtype, t.xOff + t.n * t.c * t.h * t.w, rnd);
  const wt = operand(dtype, t.wOff + t.k * t.Cg * t.r * t.s, rnd);
  const y = new Float32Array(t.yOff + t.n * t.k * t.P * t.Q + yExtra).map(() => yFill ?? rnd() * 2 - 1);
  const bias = new Float32Array(t.k).map(() => rnd() * 2 - 1);
  const buffers = { x: buffer(device, x.words), wt: buffer(device, wt.words), y: buffer(device, y), bias: buffer(device, bias) };
  const args = {
    layout: t.layout, weights: t.weights, n: t.n, c: t.c, h: t.h, w: t.w, k: t.k, r: t.r, s: t.s, groups: t.groups,
    stride_h: t.stride_h, stride_w: t.stride_w, dilation_h: t.dilation_h, dilation_w: t.dilation_w,
    pad_top: t.pad_top, pad_bottom: t.pad_bottom, pad_left: t.pad_left, pad_right: t.pad_right, beta: t.beta,
    x: buffers.x, wt: buffers.wt, y: buffers.y, x_offset: t.xOff, w_offset: t.wOff, y_offset: t.yOff,
    bias: t.bias ? buffers.bias : null, bias_offset: 0, activation: t.act,
  };
  return { t, x: x.values, wt: wt.values, y, bias, args, buffers };
}

/**
 * Runs spec with conv and compares y's whole buffer with the float64
 * reference: {o, got, maxErr, maxRef, bound, outside (elements of the
 * buffer outside y that changed), nonFinite, ok}. The buffers are destroyed.
 */
export async function runConvCase(device, conv, spec) {
  const o = convOperands(device, spec);
  await conv.run(o.args);
  const got = await read(device, o.buffers.y, o.y.length);
  for (const b of Object.values(o.buffers)) b.destroy();
  const want = convReference(o.t, o.x, o.wt, Float64Array.from(o.y), Float64Array.from(o.bias));
  const r = { o, got, maxErr: 0, maxRef: 0, bound: bounds[spec.dtype ?? 'f32'], outside: [], nonFinite: [] };
  const end = o.t.yOff + o.t.n * o.t.k * o.t.P * o.t.Q;
  for (let e = 0; e < o.y.length; e++) {
    if (e < o.t.yOff || e >= end) {
      if (!Object.is(got[e], o.y[e])) r.outside.push(`element ${e} outside y changed: ${o.y[e]} -> ${got[e]}`);
    } else if (!Number.isFinite(got[e])) {
      r.nonFinite.push(`y element ${e} is ${got[e]}`);
    } else {
      r.maxRef = Math.max(r.maxRef, Math.abs(want[e]));
      r.maxErr = Math.max(r.maxErr, Math.abs(got[e] - want[e]));
    }
  }
  r.ok = !r.outside.length && !r.nonFinite.length && r.maxErr <= r.bound * r.maxRef;
  return r;
}
