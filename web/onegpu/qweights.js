// Low-bit weight matrices (runtime/onegpu_formats.h, "Low-bit weight
// matrices"): the text form of a format (og_qweights_format_parse) and the
// layout of an N x K image (og_qweights_layout_of), with the C's rules and
// messages. Sizes are BigInt where an image may pass 2^53 bytes.

const IMAGE_MAX = 1n << 62n;
const formatNames = ['mxfp4', 'nvfp4', 'int4', 'q8_0', 'q4_k', 'q6_k'];
const zeroNames = ['none', 'uint4', 'float'];
const upper = { mxfp4: 'MXFP4', nvfp4: 'NVFP4', int4: 'INT4', q8_0: 'Q8_0', q4_k: 'Q4_K', q6_k: 'Q6_K' };
// GGUF's K-quants: super-blocks of 256 weights (OG_QK_K).
const QK_K = 256;
const kquant = (f) => f.format === 'q4_k' || f.format === 'q6_k';

const align16 = (v) => (v + 15n) & ~15n;

/**
 * A format from its text (ogtune's --weights): "mxfp4", "nvfp4", "q8_0", "q4_k", "q6_k", or
 * "int4" then, each optional and in any order, ":gN" (group 32, 64 or 128;
 * default 32) or ":gc" (one group a row), ":f16" (default) or ":bf16" (the
 * scale's type), ":none" (default), ":uint4" or ":float" (zero points).
 * Returns {format, group, scale, zero} (names as the text's; group 0 is one
 * group a row), or null for any other text, as the C returns -1.
 */
export function parseQFormat(text) {
  if (typeof text !== 'string' || text === '' || text.length >= 64 || text.endsWith(':') || text.includes('::')) return null;
  const [name, ...options] = text.split(':');
  if (!formatNames.includes(name)) return null;
  const f = { format: name, group: name === 'int4' ? 32 : 0, scale: 'f16', zero: 'none' };
  for (const t of options) {
    if (name !== 'int4') return null;
    if (t === 'gc') f.group = 0;
    else if (/^g[1-9]\d{0,2}$/.test(t)) f.group = Number(t.slice(1));
    else if (t === 'f16' || t === 'bf16') f.scale = t;
    else if (zeroNames.includes(t)) f.zero = t;
    else return null;
  }
  // The group must be one the layout takes.
  return f.group === 0 || f.group === 32 || f.group === 64 || f.group === 128 ? f : null;
}

/** The canonical text of a format (og_qweights_format_name): INT4 with every option, "int4:g128:f16:uint4". */
export function qformatName(f) {
  return f.format === 'int4' ? `int4:${f.group ? `g${f.group}` : 'gc'}:${f.scale}:${f.zero}` : f.format;
}

/** The kernel table's name of a format: what changes the decode kernel (INT4's group does not). */
export function qformatKey(f) {
  return f.format === 'int4' ? `int4:${f.scale}:${f.zero}` : f.format;
}

/**
 * The planes of an n x k matrix of format f (parseQFormat's object), as
 * og_qweights_layout_of lays them out: {block, blocks, codeBits, scaleBytes,
 * codeRowBytes, scaleRowBytes, zeroRowBytes} as numbers and {scalesAt,
 * zerosAt, bytes} as BigInt. Returns {why} instead where the C refuses
 * (why is its message: "qweights: K (2881) is not a multiple of 32").
 */
export function layoutOf(f, n, k) {
  if (n < 1) return { why: `qweights: N (${n}) is below 1` };
  if (k < 1) return { why: `qweights: K (${k}) is below 1` };
  if (k % 32 !== 0) return { why: `qweights: K (${k}) is not a multiple of 32` };
  if (f.format === 'int4' && f.group !== 0 && k % f.group !== 0) {
    return { why: `qweights: K (${k}) is not a multiple of the INT4 group (${f.group})` };
  }
  if (kquant(f) && k % QK_K !== 0) return { why: `qweights: K (${k}) is not a multiple of ${upper[f.format]}'s super-block (${QK_K})` };
  if (BigInt(k) > IMAGE_MAX) return { why: `qweights: K (${k}) makes a row past 2^62 bytes` };
  const block = kquant(f) ? QK_K : f.format === 'mxfp4' || f.format === 'q8_0' ? 32 : f.format === 'nvfp4' ? 16 : f.group || k;
  const codeBits = f.format === 'q8_0' ? 8 : f.format === 'q6_k' ? 6 : 4;
  const scaleBytes = { mxfp4: 1, nvfp4: 1, q4_k: 16, q6_k: 18 }[f.format] ?? 2;
  const blocks = k / block;
  // K is a multiple of 32 (of 256 for 6-bit codes), so a row of codes is whole 16-byte lines.
  const codeRow = BigInt(k) * BigInt(codeBits) / 8n;
  const scaleRow = align16(BigInt(blocks) * BigInt(scaleBytes));
  let zeroRow = 0n;
  if (f.format === 'int4' && f.zero === 'uint4') zeroRow = align16((BigInt(blocks) + 1n) / 2n);
  else if (f.format === 'int4' && f.zero === 'float') zeroRow = align16(BigInt(blocks) * 2n);
  const row = codeRow + scaleRow + zeroRow;
  if (row > IMAGE_MAX / BigInt(n)) {
    return { why: `qweights: N (${n}) x K (${k}) of ${upper[f.format]} needs ${row} bytes a row, an image past 2^62 bytes` };
  }
  const scalesAt = BigInt(n) * codeRow, zerosAt = scalesAt + BigInt(n) * scaleRow;
  return {
    block, blocks, codeBits, scaleBytes,
    codeRowBytes: Number(codeRow), scaleRowBytes: Number(scaleRow), zeroRowBytes: Number(zeroRow),
    scalesAt, zerosAt, bytes: zerosAt + BigInt(n) * zeroRow,
  };
}

/**
 * The layout of an n x k matrix of a format given by its text, for a page
 * that packs images (onegpu_formats.h's rules): {block, blocks, codeBits,
 * scaleBytes, codeRowBytes, scalesAt, scaleRowBytes, zerosAt, zeroRowBytes,
 * bytes}, all numbers (bytes exact below 2^53). Throws the C's refusal.
 */
export function qweightsLayout(format, n, k) {
  const f = parseQFormat(format);
  if (!f) throw new Error(`qweights: format ${format} is not mxfp4, nvfp4, q8_0, q4_k, q6_k or int4[:gN|:gc][:f16|:bf16][:none|:uint4|:float]`);
  const l = layoutOf(f, n, k);
  if (l.why) throw new Error(l.why);
  return { ...l, scalesAt: Number(l.scalesAt), zerosAt: Number(l.zerosAt), bytes: Number(l.bytes) };
}
