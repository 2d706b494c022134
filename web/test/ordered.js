// The documented summation order on the host (docs/accumulation-order.md):
// a port of og_reference_ordered (tuner/og_reference.c) for the WebGPU
// runtime's Deterministic mode, every operation rounded to float32 on its
// own. Math.fround of a double sum, difference or product of two float32
// values is the correctly rounded float32 result (a double holds more than
// 2 * 24 + 2 bits), so only the fused fma needs care: fmaf below.
import { activations } from './problems.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** The float32 next to x (a float32) away from zero, or toward zero when down. */
function neighbour(x, down) {
  f32[0] = x;
  u32[0] += down ? -1 : 1;
  return f32[0];
}

/**
 * fmaf: a * b + c rounded once to float32 (IEEE 754 fusedMultiplyAdd) for
 * float32 a, b, c. a * b is exact in a double; the double sum s may round,
 * and its error e is exact (Knuth's two-sum). fround(s) is then the right
 * answer except when s lies exactly halfway between two float32 values and
 * e is not 0: the exact sum lies on e's side of the midpoint.
 */
export function fmaf(a, b, c) {
  const p = a * b;
  const s = p + c;
  const t = s - p;
  const e = (p - (s - t)) + (c - t);
  const r = Math.fround(s);
  if (e === 0 || r === s || !Number.isFinite(s)) return r;
  const other = Math.abs(s) > Math.abs(r) ? neighbour(r, false) : neighbour(r, true);
  if (Math.abs(other - s) !== Math.abs(r - s)) return r; // not a midpoint: one rounding
  const up = (e > 0) === (s > 0); // the exact value lies beyond s, away from zero
  return Math.abs(r) > Math.abs(other) === up ? r : other;
}

/** One product term as the device's fma rounds it: once (fused) or product and sum apart. */
const step = (a, b, acc, fused) => (fused ? fmaf(a, b, acc) : Math.fround(acc + Math.fround(a * b)));

/** Terms k0 .. k1-1 in the blocked order: chains of 16, blocks of two chains, groups of four blocks. */
function rangeDot(term, fused, k0, k1) {
  let tot = 0, grp = 0, blk = 0;
  const chunks = Math.ceil((k1 - k0) / 16);
  for (let s = 0; s < chunks; s++) {
    let ch = 0;
    for (let k = k0 + 16 * s; k < k1 && k < k0 + 16 * s + 16; k++) ch = step(...term(k), ch, fused);
    const last = s === chunks - 1;
    blk = s % 2 === 0 ? ch : Math.fround(blk + ch);
    if (s % 2 === 1 || last) grp = Math.floor(s / 2) % 4 === 0 ? blk : Math.fround(grp + blk);
    if ((Math.floor(s / 2) % 4 === 3 && s % 2 === 1) || last) tot = Math.fround(tot + grp);
  }
  return tot;
}

/**
 * C after the call in the documented order, as float32 values in a
 * Float32Array of the whole C buffer (c outside the written region): g is a
 * problem of gemm.js, A and B the operands' values, c float32, bias the
 * N float32 values from the bias offset,
 * fused as the device's probe says; the tile's split-k ranges
 * ranges/rangeLen (1 range: the whole of k), few rows' slices (slice s
 * chains k = s, s + slices, ...; the slice sums are added in slice order),
 * or the decode kernel's decodeSlices (slice s chains the units of eight
 * terms s, s + decodeSlices, ... in increasing k; the slice sums are added
 * in a tree: s += s + h for h = decodeSlices / 2, ..., 1).
 * The GELUs are computed in float64, as in C.
 */
export function referenceOrdered(g, A, B, c, bias, fused, { ranges = 1, rangeLen = g.K, slices = 0, decodeSlices = 0 } = {}) {
  const out = Float32Array.from(c);
  const alpha = Math.fround(g.alpha), beta = Math.fround(g.beta);
  for (let p = 0; p < g.batch; p++) for (let i = 0; i < g.M; i++) for (let j = 0; j < g.N; j++) {
    const term = (k) => [
      A[g.offA + p * g.strideA + (g.transA ? k * g.lda + i : i * g.lda + k)],
      B[g.offB + p * g.strideB + (g.transB ? j * g.ldb + k : k * g.ldb + j)],
    ];
    const ci = g.offC + p * g.strideC + i * g.ldc + j;
    const product = alpha !== 0 && g.K > 0;
    let r = 0;
    if (product && decodeSlices) {
      const part = new Array(decodeSlices).fill(0);
      for (let u = 0; 8 * u < g.K; u++) {
        const q = u % decodeSlices;
        for (let k = 8 * u; k < g.K && k < 8 * u + 8; k++) part[q] = step(...term(k), part[q], fused);
      }
      for (let h = decodeSlices / 2; h >= 1; h /= 2) for (let s = 0; s < h; s++) part[s] = Math.fround(part[s] + part[s + h]);
      r = Math.fround(alpha * part[0]);
    } else if (product && slices) {
      let tot = 0;
      for (let q = 0; q < slices; q++) {
        let part = 0;
        for (let k = q; k < g.K; k += slices) part = step(...term(k), part, fused);
        tot = q === 0 ? part : Math.fround(tot + part);
      }
      r = Math.fround(alpha * tot);
    } else if (product) {
      let tot = 0;
      for (let q = 0; q < ranges; q++) {
        const k0 = q * rangeLen, k1 = ranges === 1 || k0 + rangeLen > g.K ? g.K : k0 + rangeLen;
        const part = rangeDot(term, fused, k0, k1);
        tot = q === 0 ? part : Math.fround(tot + part);
      }
      r = Math.fround(alpha * tot);
    }
    if (beta !== 0) {
      const old = Math.fround(beta * c[ci]);
      r = product ? Math.fround(r + old) : old;
    }
    if (g.bias) r = Math.fround(r + bias[j]);
    out[ci] = (g.act ?? 0) === 1 ? (r < 0 ? 0 : r) : Math.fround(activations[g.act ?? 0](r));
  }
  return out;
}
