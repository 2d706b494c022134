// The reference design's rules for a call, as runtime/plan/og_rules.c has
// them: whether there is a product, few rows, and the split-k ranges
// (docs/accumulation-order.md, "Split-k").

/** The split-k scratch of a GEMM object: 16 MiB of float32 planes (OG_SCRATCH_BYTES). */
export const SCRATCH_BYTES = 16 << 20;

/** alpha = 0 or K = 0: no product, A and B are never read (reference BLAS's rule). */
export const hasProduct = (call) => call.alpha !== 0 && call.k !== 0;

/** Few rows: float32 inputs, 1 <= M <= 4 and A not transposed (og_fewrows_eligible). */
export const fewRowsEligible = (dtype, m, transA) => dtype === 'f32' && m >= 1 && m <= 4 && !transA;

/**
 * The decode kernel (og_family_decode's rule): A not transposed, float16 or
 * bfloat16 at 1 <= M <= 16, float32 at 5 <= M <= 16 (few rows has 1..4).
 */
export const decodeEligible = (dtype, m, transA) => !transA && m <= 16 && m >= (dtype === 'f32' ? 5 : 1);

/** The decode kernel's rows for M (og_params_decode): the power of two covering M, at most 16. */
export function decodeRows(m) {
  let rows = 1;
  while (rows < 16 && rows < m) rows *= 2;
  return rows;
}

const ceilDiv = (a, b) => Math.ceil(a / b);

/**
 * The k ranges of a tile call: split 'rule' (the design's rule: fewer than
 * 384 workgroups of 64 x 64 and K >= 128 cut k into
 * min(16, ceil(384 / workgroups)) ranges of a multiple of 32, at least 64
 * terms), 1 (never) or n = 2..16 (ranges of ceil(K / n)); fewer, longer
 * ranges when the planes do not fit scratchFloats, none when not even two
 * do. Returns {ranges, rangeLen}; ranges 1 is no split.
 */
export function splitRanges(split, m, n, k, batch, scratchFloats) {
  const none = { ranges: 1, rangeLen: k };
  if (split === 1 || k < 2 || m <= 0 || n <= 0 || batch <= 0) return none;
  let len;
  if (split === 'rule') {
    const wgs = ceilDiv(m, 64) * ceilDiv(n, 64) * batch;
    if (wgs >= 384 || k < 128) return none;
    const want = ceilDiv(384, wgs);
    len = Math.max(64, ceilDiv(ceilDiv(k, Math.min(want, 16)), 32) * 32);
  } else {
    len = ceilDiv(k, split);
  }
  let count = ceilDiv(k, len);
  // Rounded only far above any scratch size, where the test below refuses it anyway.
  const plane = m * n * batch;
  if (plane > Math.floor(scratchFloats / 2)) return none;
  if (count * plane > scratchFloats) {
    len = ceilDiv(k, Math.floor(scratchFloats / plane));
    if (split === 'rule') len = ceilDiv(len, 32) * 32;
    count = ceilDiv(k, len);
  }
  return count < 2 ? none : { ranges: count, rangeLen: len };
}
