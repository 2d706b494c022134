// The WebGPU runtime's test harness, shared by the Node.js tests and the
// browser page (nothing of Node.js here): GPUBuffers of generated operands,
// a call through web/onegpu (args as onegpu.h names them), C read back
// whole and compared with the float64 reference.
import { operand, problem, random, reference, span } from './problems.js';

/** The design's bounds on max|C - ref| relative to max|ref|. */
export const bounds = { f32: 1e-5, f16: 2e-3, bf16: 8e-3 };

/** A storage buffer holding words (at least 16 bytes). */
export function buffer(device, words) {
  const b = device.createBuffer({
    size: Math.max(16, words.byteLength),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
  });
  new Uint32Array(b.getMappedRange()).set(new Uint32Array(words.buffer, words.byteOffset, words.length));
  b.unmap();
  return b;
}

/** The first `count` float32 values of a buffer. */
export async function read(device, buf, count) {
  const out = device.createBuffer({ size: Math.max(16, 4 * count), usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buf, 0, out, 0, out.size);
  device.queue.submit([encoder.finish()]);
  await out.mapAsync(GPUMapMode.READ);
  const values = new Float32Array(out.getMappedRange().slice(0, 4 * count));
  out.destroy();
  return values;
}

/**
 * The operands of problem spec (gemm.js's problem fields, dtype, cFill: a
 * value for all of C, biasOffset), generated from a seed of the shape:
 * {g, A, B, c, bias (the N values from biasOffset), biasAll, args, buffers}.
 */
export function operands(device, spec) {
  const { dtype = 'f32', cFill = null, biasOffset = 0, ...fields } = spec;
  const g = problem(fields);
  const rnd = random(g.M * 7919 + g.N * 104729 + g.K * 31 + g.offA + 17 * g.batch);
  const A = operand(dtype, span(g.offA, g.strideA, g.batch, g.transA ? g.K : g.M, g.lda, g.transA ? g.M : g.K), rnd);
  const B = operand(dtype, span(g.offB, g.strideB, g.batch, g.transB ? g.N : g.K, g.ldb, g.transB ? g.K : g.N), rnd);
  const c = new Float32Array(span(g.offC, g.strideC, g.batch, g.M, g.ldc, g.N)).map(() => cFill ?? rnd() * 2 - 1);
  const biasAll = new Float32Array(Math.max(1, biasOffset + g.N)).map(() => rnd() * 2 - 1);
  const buffers = { a: buffer(device, A.words), b: buffer(device, B.words), c: buffer(device, c), bias: buffer(device, biasAll) };
  const args = {
    trans_a: g.transA, trans_b: g.transB, m: g.M, n: g.N, k: g.K, batch: g.batch, alpha: g.alpha, beta: g.beta,
    a: buffers.a, b: buffers.b, c: buffers.c, lda: g.lda, ldb: g.ldb, ldc: g.ldc,
    a_offset: g.offA, b_offset: g.offB, c_offset: g.offC, stride_a: g.strideA, stride_b: g.strideB, stride_c: g.strideC,
    bias: g.bias ? buffers.bias : null, bias_offset: biasOffset, activation: g.act,
  };
  return { g, A: A.values, B: B.values, c, bias: biasAll.subarray(biasOffset), args, buffers };
}

/** Frees an operands() set's buffers. */
export function release({ buffers }) {
  for (const b of Object.values(buffers)) b.destroy();
}

/** Whether element e of C's buffer lies in the M x N region of some product. */
export function inC(g, e) {
  const r = e - g.offC;
  if (r < 0) return false;
  const b = g.batch === 1 ? 0 : Math.floor(r / g.strideC), w = r - b * g.strideC, i = Math.floor(w / g.ldc), j = w - i * g.ldc;
  return b < g.batch && i < g.M && j < g.N;
}

/**
 * Runs spec (dtype, gemm.js's problem fields, cFill, biasOffset) with gemm
 * and compares C's whole buffer with the float64 reference: {o, got,
 * maxErr, maxRef, bound, outside (elements outside C that changed, the
 * first as text), nonFinite (results inside C that are not finite)}.
 * The operands' buffers are released.
 */
export async function runCase(device, gemm, spec) {
  const o = operands(device, spec);
  await gemm.run(o.args);
  const got = await read(device, o.buffers.c, o.c.length);
  release(o);
  const want = reference(o.g, o.A, o.B, Float64Array.from(o.c), Float64Array.from(o.bias));
  const r = { o, got, maxErr: 0, maxRef: 0, bound: bounds[spec.dtype ?? 'f32'], outside: [], nonFinite: [] };
  for (let e = 0; e < o.c.length; e++) {
    if (!inC(o.g, e)) {
      if (!Object.is(got[e], o.c[e])) r.outside.push(`element ${e} outside C changed: ${o.c[e]} -> ${got[e]}`);
    } else if (!Number.isFinite(got[e])) {
      r.nonFinite.push(`C element ${e} is ${got[e]}`);
    } else {
      r.maxRef = Math.max(r.maxRef, Math.abs(want[e]));
      r.maxErr = Math.max(r.maxErr, Math.abs(got[e] - want[e]));
    }
  }
  r.ok = !r.outside.length && !r.nonFinite.length && r.maxErr <= r.bound * r.maxRef;
  return r;
}
