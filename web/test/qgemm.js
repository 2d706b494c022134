// Low-bit weight products for the WebGPU runtime's tests (createQGemm),
// nothing of Node.js: images packed byte by byte from runtime/onegpu_formats.h's
// "Low-bit weight matrices" (planes of codes, scales and zero points, rows on
// 16-byte boundaries), the weights decoded from those bytes by the header's
// table in float64 then rounded once to float32 as it says (its own code:
// E2M1 and UE4M3 from their bit fields, not the kernel's doubled codes), and
// the float64 reference C = act(A * W^T + beta * C + bias).
import { activations, operand, random } from './problems.js';
import { buffer, read } from './runtime.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const bitsOf = (x) => { f32[0] = x; return u32[0]; };
const floatOf = (bits) => { u32[0] = bits >>> 0; return f32[0]; };

/** A float16's value from its bits (IEEE 754 binary16). */
export function halfValue(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
}

/** The bits of a float16 or bfloat16 holding v, which must be exact in that type. */
function halfBits(v, type) {
  if (type === 'bf16') {
    const b = bitsOf(v);
    if (b & 0xffff) throw new Error(`${v} is not a bfloat16`);
    return b >>> 16;
  }
  if (v === 0) return 0;
  const s = v < 0 ? 0x8000 : 0, a = Math.abs(v);
  const e = Math.max(-14, Math.floor(Math.log2(a)));
  const m = e === -14 && a < 2 ** -14 ? a / 2 ** -24 : (a / 2 ** e - 1) * 1024;
  if (!Number.isInteger(m)) throw new Error(`${v} is not a float16`);
  return s | ((a < 2 ** -14 ? 0 : e + 15) << 10) | m;
}

const scaleValue = (h, type) => (type === 'bf16' ? floatOf(h << 16) : halfValue(h));

/** OCP E2M1 (1 sign, 2 exponent bits of bias 1, 1 mantissa bit): 0, 0.5, 1, 1.5, 2, 3, 4, 6. */
function e2m1(q) {
  const s = q & 8 ? -1 : 1, e = (q >> 1) & 3, m = q & 1;
  return s * (e === 0 ? m * 0.5 : (1 + m / 2) * 2 ** (e - 1));
}

/** E8M0: 2^(s - 127), 0xFF NaN. */
const e8m0 = (s) => (s === 0xff ? NaN : 2 ** (s - 127));

/** UE4M3 (the unsigned use of OCP E4M3: 4 exponent bits of bias 7, 3 mantissa bits; 0x7F NaN). */
function ue4m3(s) {
  const e = (s >> 3) & 15, m = s & 7;
  if (e === 15 && m === 7) return NaN;
  return e === 0 ? m * 2 ** -9 : (1 + m / 8) * 2 ** (e - 7);
}

/**
 * An image of n x k weights of format f (the runtime's parseQFormat object)
 * laid out as lay (qweightsLayout), its bytes chosen by rnd: random codes,
 * scales and zero points, or with integer, values that make every weight a
 * small integer (so that every product and sum is exact in float32).
 */
export function packImage(f, lay, n, k, rnd, integer) {
  const bytes = new Uint8Array(lay.bytes);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  for (let j = 0; j < n; j++) {
    const codes = j * lay.codeRowBytes;
    for (let i = 0; i < lay.codeRowBytes; i++) bytes[codes + i] = Math.floor(rnd() * 256);
    const scales = lay.scalesAt + j * lay.scaleRowBytes, zeros = lay.zerosAt + j * lay.zeroRowBytes;
    for (let b = 0; b < lay.blocks; b++) {
      if (f.format === 'q4_k' || f.format === 'q6_k') {
        packKQuant(f, lay, bytes, scales, b, rnd, integer);
        continue;
      }
      if (f.format === 'mxfp4') {
        // E8M0 2^1 .. 2^2 doubles E2M1's halves into integers.
        bytes[scales + b] = integer ? 128 + Math.floor(rnd() * 2) : 120 + Math.floor(rnd() * 10);
      } else if (f.format === 'nvfp4') {
        // UE4M3 2 (0x40) or 4 (0x48); else 0x20..0x57 (2^-3 .. 15).
        bytes[scales + b] = integer ? pick([0x40, 0x48]) : 0x20 + Math.floor(rnd() * 0x38);
      } else {
        const type = f.format === 'q8_0' ? 'f16' : f.scale;
        const s = integer ? pick([1, 2]) : (rnd() < 0.5 ? -1 : 1) * (1 + Math.floor(rnd() * 64) / 64) * 2 ** -Math.floor(3 + rnd() * 4);
        const h = halfBits(s, type);
        bytes[scales + 2 * b] = h & 0xff;
        bytes[scales + 2 * b + 1] = h >> 8;
        if (f.format === 'int4' && f.zero === 'uint4') {
          bytes[zeros + (b >> 1)] |= Math.floor(rnd() * 16) << (4 * (b & 1));
        } else if (f.format === 'int4' && f.zero === 'float') {
          const z = halfBits(Math.floor(rnd() * 16) + (integer ? 0 : pick([0, 0.25, 0.5])), f.scale);
          bytes[zeros + 2 * b] = z & 0xff;
          bytes[zeros + 2 * b + 1] = z >> 8;
        }
      }
    }
  }
  return bytes;
}

/**
 * Super-block b's scales of a K-quant row whose scale row starts at byte
 * scales: float16 d (and Q4_K's dmin) of 2^-9 .. 2^-6 (integer: 1) and
 * random sub-block scales (Q4_K: the 12 bytes of 6-bit scales and mins;
 * Q6_K: int8; integer: every scale and min 0..3, or -2..2).
 */
function packKQuant(f, lay, bytes, scales, b, rnd, integer) {
  const d = () => halfBits(integer ? 1 : (1 + Math.floor(rnd() * 64) / 64) * 2 ** -Math.floor(6 + rnd() * 4), 'f16');
  const put16 = (at, h) => { bytes[at] = h & 0xff; bytes[at + 1] = h >> 8; };
  if (f.format === 'q4_k') {
    put16(scales + 16 * b, d());
    put16(scales + 16 * b + 2, d());
    // Integer: sub-blocks 0-3's scales and mins 0..3 with no top bits for 4-7, whose nibbles are 0..3 too.
    for (let i = 0; i < 12; i++) bytes[scales + 16 * b + 4 + i] = Math.floor(rnd() * 256) & (integer ? (i < 8 ? 0x03 : 0x33) : 0xff);
  } else {
    for (let i = 0; i < 16; i++) bytes[scales + 16 * b + i] = integer ? (Math.floor(rnd() * 5) - 2) & 0xff : Math.floor(rnd() * 256);
    put16(scales + 16 * lay.blocks + 2 * b, d());
  }
}

/**
 * The n x k weights of an image (row-major, float64 holding float32 values)
 * by the header's table: MXFP4 e2m1(q) * 2^(s - 127); NVFP4 e2m1(q) *
 * ue4m3(s) * tensor_scale; INT4 ((float)q - z) * s (z 8, a uint4 or a
 * 16-bit float of the scale's type); Q8_0 q * s; Q4_K (d * sc) * q - dmin *
 * m; Q6_K (d * sc) * (q - 32); each one rounding of the exact value (INT4:
 * q - z rounded first).
 */
export function decodeImage(f, lay, bytes, n, k, tensorScale) {
  const w = new Float64Array(n * k);
  const code4 = (row, i) => (bytes[row + (i >> 1)] >> (4 * (i & 1))) & 15;
  const half16 = (at) => bytes[at] | (bytes[at + 1] << 8);
  for (let j = 0; j < n; j++) {
    const codes = j * lay.codeRowBytes, scales = lay.scalesAt + j * lay.scaleRowBytes, zeros = lay.zerosAt + j * lay.zeroRowBytes;
    for (let i = 0; i < k; i++) {
      const b = Math.floor(i / lay.block);
      let v;
      if (f.format === 'mxfp4') v = e2m1(code4(codes, i)) * e8m0(bytes[scales + b]);
      else if (f.format === 'nvfp4') v = e2m1(code4(codes, i)) * ue4m3(bytes[scales + b]) * (tensorScale === 0 ? 1 : tensorScale);
      else if (f.format === 'q8_0') v = ((bytes[codes + i] << 24) >> 24) * halfValue(half16(scales + 2 * b));
      else if (f.format === 'q4_k') {
        // The super-block's d, dmin and 12 bytes; sub-block s's 6-bit scale and min as get_scale_min_k4 packs them.
        const h = scales + 16 * b, q = h + 4, s = (i >> 5) & 7;
        const sc = s < 4 ? bytes[q + s] & 63 : (bytes[q + s + 4] & 15) | ((bytes[q + s - 4] >> 6) << 4);
        const m = s < 4 ? bytes[q + s + 4] & 63 : (bytes[q + s + 4] >> 4) | ((bytes[q + s] >> 6) << 4);
        v = halfValue(half16(h)) * sc * code4(codes, i) - halfValue(half16(h + 2)) * m;
      } else if (f.format === 'q6_k') {
        // The high 2 bits after the row's K / 2 bytes of low nibbles; int8 scales, then the d's.
        const q = code4(codes, i) | (((bytes[codes + k / 2 + (i >> 2)] >> (2 * (i & 3))) & 3) << 4);
        v = halfValue(half16(scales + 16 * lay.blocks + 2 * b)) * ((bytes[scales + (i >> 4)] << 24) >> 24) * (q - 32);
      }
      else {
        const z = f.zero === 'uint4' ? (bytes[zeros + (b >> 1)] >> (4 * (b & 1))) & 15
          : f.zero === 'float' ? scaleValue(half16(zeros + 2 * b), f.scale) : 8;
        v = Math.fround(code4(codes, i) - z) * scaleValue(half16(scales + 2 * b), f.scale);
      }
      w[j * k + i] = Math.fround(v);
    }
  }
  return w;
}

/** A's elements: random in [-1, 1] (operand()), or with integer small integers, exact in every type. */
function aOperand(dtype, count, rnd, integer) {
  if (!integer) return operand(dtype, count, rnd);
  const values = new Float64Array(count).map(() => Math.floor(rnd() * 7) - 3);
  const words = new Uint32Array(Math.max(1, dtype === 'f32' ? count : Math.ceil(count / 2)));
  values.forEach((v, i) => {
    if (dtype === 'f32') words[i] = bitsOf(v);
    else words[i >> 1] |= halfBits(v, dtype) << (16 * (i & 1));
  });
  return { values, words };
}

/**
 * The operands of a product spec: {format (text), f (parseQFormat's), lay
 * (qweightsLayout of N x K), dtype, m, n, k, batch, lda, ldc, aOffset,
 * cOffset, wOffset (bytes), strideW (bytes; images of every product), beta,
 * bias, act, tensorScale, integer, cFill, seed} with GPUBuffers and args as
 * onegpu.h names them: {spec, A, W (per product), c, bias, args, buffers}.
 */
export function qOperands(device, spec) {
  const s = { batch: 1, beta: 0, act: 0, bias: false, tensorScale: 0, aOffset: 0, cOffset: 0, wOffset: 0, integer: false, cFill: null, ...spec };
  s.lda ??= s.k;
  s.ldc ??= s.n;
  s.strideA ??= s.m * s.lda;
  s.strideC ??= s.m * s.ldc;
  s.strideW ??= s.batch > 1 ? s.lay.bytes + 16 : 0;
  const rnd = random(s.seed ?? s.m * 7919 + s.n * 104729 + s.k * 31 + s.batch * 17 + s.aOffset);
  const A = aOperand(s.dtype, s.aOffset + (s.batch - 1) * s.strideA + (s.m - 1) * s.lda + s.k, rnd, s.integer);
  const wBytes = new Uint8Array(s.wOffset + (s.batch - 1) * s.strideW + s.lay.bytes);
  const W = [];
  for (let b = 0; b < s.batch; b++) {
    const at = s.wOffset + b * s.strideW;
    if (b === 0 || s.strideW !== 0) wBytes.set(packImage(s.f, s.lay, s.n, s.k, rnd, s.integer), at);
    W.push(decodeImage(s.f, s.lay, wBytes.subarray(at), s.n, s.k, s.tensorScale));
  }
  const cLen = s.cOffset + (s.batch - 1) * s.strideC + (s.m - 1) * s.ldc + s.n + 3;
  const c = new Float32Array(cLen).map(() => s.cFill ?? (s.integer ? Math.floor(rnd() * 9) - 4 : rnd() * 2 - 1));
  const bias = new Float32Array(s.n).map(() => (s.integer ? Math.floor(rnd() * 9) - 4 : rnd() * 2 - 1));
  const wWords = new Uint32Array(Math.ceil(wBytes.length / 4));
  new Uint8Array(wWords.buffer).set(wBytes);
  const buffers = { a: buffer(device, A.words), w: buffer(device, wWords), c: buffer(device, c), bias: buffer(device, bias) };
  const args = {
    m: s.m, n: s.n, k: s.k, batch: s.batch, a: buffers.a, lda: s.lda, a_offset: s.aOffset, stride_a: s.strideA,
    w: buffers.w, w_offset: s.wOffset, stride_w: s.strideW, tensor_scale: s.tensorScale,
    c: buffers.c, ldc: s.ldc, c_offset: s.cOffset, stride_c: s.strideC, beta: s.beta,
    bias: s.bias ? buffers.bias : null, bias_offset: 0, activation: s.act,
  };
  return { s, A: A.values, W, c, bias, args, buffers };
}

/**
 * The float64 reference of C's whole buffer, and a bound on each element's
 * rounding error: (K + 4) units of float32 rounding of the sum of the
 * terms' magnitudes (any order of float32 sums and products, fused or not,
 * with NVFP4's scale rounded once more) before the activation; with s.dot
 * (the integer path) also its quantisation bound (docs/decode.md): each
 * block of 32 adds (amax / 254) * (1 + 2^-8) * sum |w|.
 */
export function qReference(o) {
  const { s, A, W, c, bias } = o;
  const want = Float64Array.from(c), tol = new Float64Array(c.length);
  const u = 2 ** -24;
  for (let b = 0; b < s.batch; b++) for (let i = 0; i < s.m; i++) for (let j = 0; j < s.n; j++) {
    let sum = 0, mag = 0;
    for (let kk = 0; kk < s.k; kk++) {
      const t = A[s.aOffset + b * s.strideA + i * s.lda + kk] * W[b][j * s.k + kk];
      sum += t;
      mag += Math.abs(t);
    }
    let quant = 0;
    for (let k0 = 0; s.dot && k0 < s.k; k0 += 32) {
      let amax = 0, wsum = 0;
      for (let kk = k0; kk < k0 + 32; kk++) {
        amax = Math.max(amax, Math.abs(A[s.aOffset + b * s.strideA + i * s.lda + kk]));
        wsum += Math.abs(W[b][j * s.k + kk]);
      }
      quant += amax / 254 * (1 + 2 ** -8) * wsum;
    }
    const ci = s.cOffset + b * s.strideC + i * s.ldc + j;
    const old = s.beta !== 0 ? s.beta * c[ci] : 0;
    const r = sum + old + (s.bias ? bias[j] : 0);
    want[ci] = activations[s.act](r);
    // The activation's slope is at most about 1.13 (GELU), its own error a few ulp.
    tol[ci] = 1.2 * (s.k + 4) * u * (mag + Math.abs(old) + Math.abs(s.bias ? bias[j] : 0)) + 4 * u * Math.abs(want[ci]) + 1.2 * quant;
  }
  return { want, tol };
}

/** Whether element e of C's buffer is one the product writes. */
export function inQC(s, e) {
  const r = e - s.cOffset;
  if (r < 0) return false;
  const b = s.batch === 1 ? 0 : Math.floor(r / s.strideC), w = r - b * s.strideC, i = Math.floor(w / s.ldc), j = w - i * s.ldc;
  return b < s.batch && i < s.m && j < s.n;
}

/**
 * Runs spec with qgemm and compares C's whole buffer with the reference:
 * {o, got, want, bad (elements past their bound, the first ones as text),
 * outside (elements outside C that changed), exact (whether every element
 * equals the reference's bits)}. The operands' buffers are released.
 */
export async function runQCase(device, qgemm, spec) {
  const o = qOperands(device, spec);
  await qgemm.run(o.args);
  const got = await read(device, o.buffers.c, o.c.length);
  for (const b of Object.values(o.buffers)) b.destroy();
  const { want, tol } = qReference(o);
  const r = { o, got, want, bad: [], outside: [], exact: true };
  for (let e = 0; e < o.c.length; e++) {
    if (!inQC(o.s, e)) {
      if (!Object.is(got[e], o.c[e])) r.outside.push(`element ${e} outside C changed: ${o.c[e]} -> ${got[e]}`);
      continue;
    }
    if (!Object.is(got[e], Math.fround(want[e]))) r.exact = false;
    if (!(Math.abs(got[e] - want[e]) <= tol[e]) && r.bad.length < 5) r.bad.push(`C[${e}] = ${got[e]}, reference ${want[e]} +- ${tol[e]}`);
  }
  return r;
}
