// Validation of a call before anything is recorded: the checks of
// runtime/plan/og_check.c in the same order with the same messages, plus
// WebGPU's own (a GPUBuffer with STORAGE usage and a size in whole words,
// no buffer bound both read-only and writable in one dispatch). Extents are
// computed in BigInt, as the C runtime computes them in 64 bits. Both
// runtimes run the cases of tests/data/arg_checks.txt (web/test/checks.test.js,
// tests/test_arg_checks.c): a changed rule or message changes that file.

const U32 = 0xffffffffn;
const U64 = (1n << 64n) - 1n;
const I64 = (1n << 63n) - 1n;

/** Throws the Error of a refused call; code 'invalid-argument' or 'unsupported' (onegpu.h's statuses). */
export function refuse(message, code = 'invalid-argument') {
  const e = new Error(message);
  e.code = code;
  throw e;
}

/** What the checks need of the device (GPUSupportedLimits). */
export function limitsOf(device) {
  const l = device.limits;
  return {
    bindAlign: BigInt(l.minStorageBufferOffsetAlignment),
    maxBinding: BigInt(l.maxStorageBufferBindingSize),
    maxCount: l.maxComputeWorkgroupsPerDimension,
    maxInvocations: l.maxComputeInvocationsPerWorkgroup,
    maxSize: [l.maxComputeWorkgroupSizeX, l.maxComputeWorkgroupSizeY, l.maxComputeWorkgroupSizeZ],
    maxWorkgroupBytes: l.maxComputeWorkgroupStorageSize,
  };
}

/** An integer field of args (absent is 0, as in a zeroed og_gemm_args). */
export function int(op, args, name) {
  const v = args[name] ?? 0;
  if (!Number.isSafeInteger(v)) refuse(`${op}: ${name} (${v}) is not an integer`);
  return v;
}

/** One past the last element: off + (batch-1)*stride + (rows-1)*ld + cols, or null past 2^64. */
function extent(off, batch, stride, rows, ld, cols) {
  const end = BigInt(off) + BigInt(batch - 1) * BigInt(stride) + BigInt(rows - 1) * BigInt(ld) + BigInt(cols);
  return end > U64 ? null : end;
}

const bindingStart = (lim, first) => first / lim.bindAlign * lim.bindAlign;

/** A GPUBuffer readable by the kernels: storage usage, whole 32-bit words. */
function checkBuffer(op, name, buf) {
  if (buf === null || buf === undefined) refuse(`${op}: ${name} is NULL`);
  if (typeof buf.size !== 'number' || typeof buf.usage !== 'number') refuse(`${op}: ${name} is not a GPUBuffer`);
  if (!(buf.usage & GPUBufferUsage.STORAGE)) refuse(`${op}: ${name}'s GPUBuffer lacks GPUBufferUsage.STORAGE`);
  if (buf.size % 4) refuse(`${op}: ${name}'s GPUBuffer size (${buf.size} bytes) is not a whole number of 32-bit words (the kernels read words)`);
}

/**
 * Operand `name` of rows x cols elements of elemBytes bytes: its binding
 * (a range from its first element aligned down to
 * minStorageBufferOffsetAlignment, whole words) and its element offset there.
 */
export function checkOperand(lim, op, name, buf, elemBytes, off, batch, stride, rows, ld, cols) {
  checkBuffer(op, name, buf);
  const end = extent(off, batch, stride, rows, ld, cols);
  if (end === null || end - BigInt(off) > U32) refuse(`${op}: ${name} spans more than 2^32 elements (stride and ld too large)`);
  const eb = BigInt(elemBytes);
  const need = end * eb;
  if (need > U64) refuse(`${op}: ${name} offset (${off}) is too large`);
  const first = BigInt(off) * eb;
  const start = bindingStart(lim, first);
  const bound = need - start;
  if (bound / eb > U32) {
    refuse(`${op}: ${name} spans more than 2^32 elements from where the device can bind it (offset ${off})`, 'unsupported');
  }
  if (bound > lim.maxBinding) {
    const why = name === 'A' || name === 'B' ? 'WebGPU has no device addresses to read it by address' : 'it is written or read through a binding';
    refuse(`${op}: ${name} needs ${bound} bytes in one binding, more than the device's maxStorageBufferBindingSize of ${lim.maxBinding}, and ${why}`, 'unsupported');
  }
  if (need > BigInt(buf.size)) {
    refuse(`${op}: ${name} needs ${end} elements (offset ${off}, ${rows} x ${cols} with ld ${ld}, batch ${batch} with stride ${stride}), but its buffer holds ${Math.floor(buf.size / elemBytes)}`);
  }
  return { buffer: buf, offset: Number(start), size: Number((bound + 3n) / 4n * 4n), elements: Number((first - start) / eb) };
}

/** A float32 vector read at offset + j for every column j < N (the bias). */
export function checkColumns(lim, op, name, buf, offset, n) {
  checkBuffer(op, name, buf);
  if (!Number.isSafeInteger(offset) || offset < 0) refuse(`${op}: ${name} offset (${offset}) is negative or too large`);
  const first = 4n * BigInt(offset);
  const need = first + 4n * BigInt(n);
  const start = bindingStart(lim, first);
  const bound = need - start;
  if (bound / 4n > U32) refuse(`${op}: ${name} offset (${offset}) exceeds 32-bit indexing from where the device can bind it`);
  if (bound > lim.maxBinding) {
    refuse(`${op}: ${name} needs ${bound} bytes in one binding, more than the device's maxStorageBufferBindingSize of ${lim.maxBinding}`, 'unsupported');
  }
  if (need > BigInt(buf.size)) {
    refuse(`${op}: ${name} needs ${need / 4n} elements (offset ${offset} + N ${n}), but its buffer holds ${Math.floor(buf.size / 4)}`);
  }
  return { buffer: buf, offset: Number(start), size: Math.max(4, Number(bound)), elements: Number((first - start) / 4n) };
}

/** Every field non-negative and, but for the offsets, within 32-bit indexing. */
export function checkFields(op, fields) {
  for (const [name, v] of fields) {
    if (v < 0) refuse(`${op}: ${name} (${v}) is negative`);
    if (v > 0xffffffff && !name.includes('offset')) refuse(`${op}: ${name} (${v}) exceeds 32-bit indexing`);
  }
}

/** A leading dimension against the stored row length: at least max(1, dim), BLAS's rule. */
function checkLd(op, ldName, ld, dimName, dim, what) {
  if (ld >= Math.max(1, dim)) return;
  if (dim === 0) refuse(`${op}: ${ldName} (${ld}) must be at least 1 (${dimName} is 0; BLAS asks for max(1, ${dimName}))${what}`);
  refuse(`${op}: ${ldName} (${ld}) is smaller than ${dimName} (${dim})${what}`);
}

function checkBatchOverlap(op, m, n, ldc, strideC, batch) {
  const need = BigInt(m - 1) * BigInt(ldc) + BigInt(n);
  if (batch > 1 && BigInt(strideC) < need) {
    refuse(`${op}: stride_c (${strideC}) makes the batch's outputs overlap (needs at least (M-1)*ldc + N = ${need})`);
  }
}

function checkEpilogue(lim, op, args, n) {
  const act = args.activation ?? 0;
  if (!Number.isInteger(act) || act < 0 || act > 3) refuse(`${op}: activation ${act} is not none, ReLU, GELU (erf) or GELU (tanh)`);
  return args.bias ? checkColumns(lim, op, 'bias', args.bias, args.bias_offset ?? 0, n) : null;
}

/** WebGPU's usage scopes: a dispatch binds no buffer both read-only and writable (c, named cName, the written one). */
export function checkAliases(op, c, others, cName = 'C') {
  for (const [name, binding] of others) {
    if (binding && binding.buffer === c.buffer) {
      refuse(`${op}: ${cName} and ${name} share a GPUBuffer, which WebGPU cannot bind both writable and read-only in one dispatch`);
    }
  }
}

/**
 * A checked GEMM call (og_gemm_args's fields, snake_case as in onegpu.h):
 * its sizes, alpha and beta as float32, the epilogue bits and the bindings
 * of A, B, C and the bias ({buffer, offset, size} in bytes, elements: the
 * operand's element offset from there). Throws the refusal otherwise.
 */
export function checkGemm(lim, elemBytes, args) {
  const op = 'gemm';
  const f = {};
  for (const name of ['m', 'n', 'k', 'batch', 'a_offset', 'b_offset', 'c_offset', 'stride_a', 'stride_b', 'stride_c', 'lda', 'ldb', 'ldc']) {
    f[name] = int(op, args, name);
  }
  checkFields(op, [['M', f.m], ['N', f.n], ['K', f.k], ['batch', f.batch], ['a_offset', f.a_offset], ['b_offset', f.b_offset],
    ['c_offset', f.c_offset], ['stride_a', f.stride_a], ['stride_b', f.stride_b], ['stride_c', f.stride_c],
    ['lda', f.lda], ['ldb', f.ldb], ['ldc', f.ldc]]);
  const transA = !!args.trans_a, transB = !!args.trans_b;
  checkLd(op, 'lda', f.lda, transA ? 'M' : 'K', transA ? f.m : f.k, transA ? ' for A transposed' : ' for A not transposed');
  checkLd(op, 'ldb', f.ldb, transB ? 'K' : 'N', transB ? f.k : f.n, transB ? ' for B transposed' : ' for B not transposed');
  checkLd(op, 'ldc', f.ldc, 'N', f.n, '');
  const bias = checkEpilogue(lim, op, args, f.n);
  const batch = f.batch === 0 ? 1 : f.batch;
  const call = {
    ...f, batch, transA, transB, alpha: Math.fround(args.alpha ?? 0), beta: Math.fround(args.beta ?? 0),
    activation: args.activation ?? 0, bias, a: null, b: null, c: null, empty: f.m === 0 || f.n === 0,
  };
  if (call.empty) return call;
  checkBatchOverlap(op, f.m, f.n, f.ldc, f.stride_c, batch);
  if (f.k > 0) {
    call.a = checkOperand(lim, op, 'A', args.a, elemBytes, f.a_offset, batch, f.stride_a, transA ? f.k : f.m, f.lda, transA ? f.m : f.k);
    call.b = checkOperand(lim, op, 'B', args.b, elemBytes, f.b_offset, batch, f.stride_b, transB ? f.n : f.k, f.ldb, transB ? f.k : f.n);
  }
  call.c = checkOperand(lim, op, 'C', args.c, 4, f.c_offset, batch, f.stride_c, f.m, f.ldc, f.n);
  checkAliases(op, call.c, [['A', call.a], ['B', call.b], ['the bias', bias]]);
  return call;
}

/** A checked elementwise call: M x N of C per product, and the bias (og_elementwise_check). */
export function checkElementwise(lim, args) {
  const op = 'elementwise';
  const f = {};
  for (const name of ['m', 'n', 'batch', 'c_offset', 'stride_c', 'ldc']) f[name] = int(op, args, name);
  checkFields(op, [['M', f.m], ['N', f.n], ['batch', f.batch], ['c_offset', f.c_offset], ['stride_c', f.stride_c], ['ldc', f.ldc]]);
  checkLd(op, 'ldc', f.ldc, 'N', f.n, '');
  const bias = checkEpilogue(lim, op, args, f.n);
  const batch = f.batch === 0 ? 1 : f.batch;
  const call = { ...f, k: 0, batch, activation: args.activation ?? 0, bias, c: null, empty: f.m === 0 || f.n === 0 };
  if (call.empty) return call;
  checkBatchOverlap(op, f.m, f.n, f.ldc, f.stride_c, batch);
  call.c = checkOperand(lim, op, 'C', args.c, 4, f.c_offset, batch, f.stride_c, f.m, f.ldc, f.n);
  checkAliases(op, call.c, [['the bias', bias]]);
  return call;
}

/** og_conv_layout and og_conv_weights: the tensors' layouts of a convolution (args.layout, args.weights). */
export const ConvLayout = Object.freeze({ NHWC: 0, NCHW: 1 });
export const ConvWeights = Object.freeze({ KRSC: 0, KCRS: 1 });

/** The kernels carry strides, dilations, paddings and filter sizes as 16-bit halves of uniform words. */
const CONV_SMALL_MAX = 65535;
const orOne = (v) => (v === 0 ? 1 : v);

/**
 * The output size [P, Q] of a convolution's args (og_conv_output_size):
 * P = floor((H + pad_top + pad_bottom - ((R - 1) * dilation_h + 1)) / stride_h) + 1,
 * Q likewise from W, S, pad_left, pad_right, dilation_w and stride_w (0 is
 * 1 for a stride or a dilation), without other checks: a value below 1
 * means the call would be refused, as does an absent or non-integer field
 * (0 then).
 */
export function convOutputSize(args) {
  const axis = (size, pad0, pad1, filter, dilation, stride) => {
    const v = [size, pad0, pad1, filter, dilation, stride].map((x) => x ?? 0);
    if (!v.every(Number.isSafeInteger) || orOne(v[5]) <= 0) return 0;
    const span = BigInt(v[0]) + BigInt(v[1]) + BigInt(v[2]) - ((BigInt(v[3]) - 1n) * BigInt(orOne(v[4])) + 1n);
    const stride_ = BigInt(orOne(v[5]));
    // Floor division: a window larger than the padded input gives P < 1.
    const q = span >= 0n ? span / stride_ : -((-span + stride_ - 1n) / stride_);
    return Number(q + 1n);
  };
  return [axis(args.h, args.pad_top, args.pad_bottom, args.r, args.dilation_h, args.stride_h),
    axis(args.w, args.pad_left, args.pad_right, args.s, args.dilation_w, args.stride_w)];
}

/**
 * A checked convolution call (og_conv_args's fields, snake_case as in
 * onegpu.h; runtime/plan/og_conv_check.c's checks in its order with its
 * messages, then WebGPU's own): {shape, gemm, push, bindings} where shape
 * is the implicit GEMM's {p, q, groups, cg, kg, m: P*Q, n: Kg, k: Cg*R*S,
 * batch: N*groups, empty}, gemm whether it is the GEMM itself (1x1, stride
 * 1, unpadded, ungrouped NHWC, more than 4 pixels), push the uniform's
 * values (conv_gather.tmpl reads the geometry from words the GEMM does not
 * use for a convolution)
 * and bindings {x, wt, y, bias} as checkOperand makes them. Throws the
 * refusal otherwise.
 */
export function checkConv(lim, elemBytes, args) {
  const op = 'conv';
  const layout = args.layout ?? 0, weights = args.weights ?? 0;
  if (layout !== ConvLayout.NHWC && layout !== ConvLayout.NCHW) refuse(`conv: layout ${layout} is not NHWC or NCHW`);
  if (weights !== ConvWeights.KRSC && weights !== ConvWeights.KCRS) refuse(`conv: weight layout ${weights} is not KRSC or KCRS`);
  const f = {};
  const names = ['n', 'c', 'h', 'w', 'k', 'r', 's', 'groups', 'stride_h', 'stride_w', 'dilation_h', 'dilation_w',
    'pad_top', 'pad_bottom', 'pad_left', 'pad_right', 'x_offset', 'w_offset', 'y_offset'];
  for (const name of names) f[name] = int(op, args, name);
  // C's names: the sizes in capitals.
  const shown = (name) => (name.length === 1 ? name.toUpperCase() : name);
  checkFields(op, names.map((name) => [shown(name), f[name]]));
  for (const name of ['c', 'h', 'w', 'r', 's']) if (f[name] < 1) refuse(`conv: ${shown(name)} (0) must be at least 1`);
  const small = [['R', f.r], ['S', f.s], ['stride_h', orOne(f.stride_h)], ['stride_w', orOne(f.stride_w)],
    ['dilation_h', orOne(f.dilation_h)], ['dilation_w', orOne(f.dilation_w)], ['pad_top', f.pad_top], ['pad_left', f.pad_left]];
  for (const [name, v] of small) if (v > CONV_SMALL_MAX) refuse(`conv: ${name} (${v}) is beyond the kernel's ${CONV_SMALL_MAX}`, 'unsupported');
  // Rows and columns of the padded input stay far inside 32 bits in the kernel's unsigned arithmetic.
  if (f.h + f.pad_top + f.pad_bottom + orOne(f.stride_h) > 0x7fffffff || f.w + f.pad_left + f.pad_right + orOne(f.stride_w) > 0x7fffffff) {
    refuse(`conv: the padded input (H ${f.h}, W ${f.w} with padding) is beyond 2^31 rows or columns`, 'unsupported');
  }
  const [p, q] = convOutputSize(f);
  if (p < 1 || q < 1) {
    const rows = p < 1;
    refuse(`conv: output ${rows ? 'height P' : 'width Q'} (${rows ? p : q}) is below 1: the dilated filter (${rows ? f.r : f.s} x dilation ${orOne(rows ? f.dilation_h : f.dilation_w)}) is larger than the padded input (${rows ? f.h : f.w} + padding ${rows ? f.pad_top + f.pad_bottom : f.pad_left + f.pad_right})`);
  }
  const groups = orOne(f.groups);
  if (groups > 0x7fffffff) refuse(`conv: groups (${groups}) is beyond 2^31 - 1`, 'unsupported');
  if (f.c % groups !== 0 || f.k % groups !== 0) refuse(`conv: groups (${groups}) must divide C (${f.c}) and K (${f.k})`);
  const cg = f.c / groups, kg = f.k / groups;
  const shape = { p, q, groups, cg, kg, m: p * q, n: kg, k: cg * f.r * f.s, batch: f.n * groups, empty: f.n === 0 || f.k === 0 };
  // Exact in BigInt (P*Q, Cg*R*S and N*groups may pass 2^53 before they are
  // refused); the C computes them in 64 bits and refuses one past first.
  const gemmDims = [['P * Q', BigInt(p) * BigInt(q)], ['Cg * R * S', BigInt(cg) * BigInt(f.r) * BigInt(f.s)], ['N * groups', BigInt(f.n) * BigInt(groups)]];
  for (const [name, v] of gemmDims) if (v > I64) refuse(`conv: ${name} overflows 64 bits`);
  checkFields(op, gemmDims);
  const activation = args.activation ?? 0;
  if (!Number.isInteger(activation) || activation < 0 || activation > 3) refuse(`conv: activation ${activation} is not none, ReLU, GELU (erf) or GELU (tanh)`);
  const call = { shape, gemm: false, push: null, bindings: null };
  if (shape.empty) return call;

  // Each tensor's elements, counted in 64 bits as the C counts them: past
  // 2^63 refused before its buffer is looked at.
  const tensor = (name, buf, bytes, offset, ...sizes) => {
    const count = sizes.reduce((a, b) => a * BigInt(b), 1n);
    if (count > I64) refuse(`conv: ${name} spans more than 2^63 elements`);
    return checkOperand(lim, op, name, buf, bytes, offset, 1, 0, 1, 1, Number(count));
  };
  const x = tensor('x', args.x, elemBytes, f.x_offset, f.n, f.c, f.h, f.w);
  const wt = tensor('wt', args.wt, elemBytes, f.w_offset, f.k, shape.k);
  const y = tensor('y', args.y, 4, f.y_offset, f.n, f.k, shape.m);
  const bias = args.bias ? checkColumns(lim, op, 'bias', args.bias, args.bias_offset ?? 0, f.k) : null;
  checkAliases(op, y, [['x', x], ['wt', wt], ['the bias', bias]], 'y');
  call.bindings = { x, wt, y, bias };
  // More than 4 pixels, as og_conv_geometry_check: the GEMM's few-rows
  // kernel (another order) never takes the call, so both routes sum alike.
  call.gemm = layout === ConvLayout.NHWC && f.r === 1 && f.s === 1 && orOne(f.stride_h) === 1 && orOne(f.stride_w) === 1 &&
    f.pad_top === 0 && f.pad_bottom === 0 && f.pad_left === 0 && f.pad_right === 0 && groups === 1 && shape.m > 4;
  const nchw = layout === ConvLayout.NCHW;
  // The 16-bit halves as sums: a shift past bit 31 would turn the word negative.
  const halves = (lo, hi) => lo + hi * 65536;
  call.push = {
    M: shape.m, N: shape.n, K: shape.k, lda: f.w, ldb: shape.k, ldc: nchw ? shape.m : f.k,
    off_a: x.elements, off_b: wt.elements, off_c: y.elements,
    stride_a: f.c * f.h * f.w, stride_b: f.h, stride_c: f.k * shape.m,
    alpha: 1, beta: Math.fround(args.beta ?? 0), batch: shape.batch, ranges: 1,
    bias_off: bias?.elements ?? 0, epi: activation | (bias ? 4 : 0),
    zero_a: groups, zero_b: 0, scale_off: q,
    addr_a_lo: halves(f.r, f.s), addr_a_hi: halves(orOne(f.stride_h), orOne(f.stride_w)),
    addr_b_lo: halves(orOne(f.dilation_h), orOne(f.dilation_w)), addr_b_hi: halves(f.pad_top, f.pad_left),
  };
  return call;
}

/** printf's %g of a float (six significant digits; "inf", "nan"), for the C's messages. */
function printfG(x) {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x < 0 ? '-inf' : 'inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const exp = Number(x.toExponential(5).split('e')[1]);
  const strip = (s) => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);
  if (exp < -4 || exp >= 6) {
    const [m] = x.toExponential(5).split('e');
    return `${strip(m)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return strip(x.toFixed(5 - exp));
}

/**
 * A checked low-bit weight product (og_qgemm_args's fields, snake_case as
 * in onegpu.h): runtime/plan/og_qgemm_plan.c og_qgemm_check's checks in
 * its order with its messages (the weights' fields, the layout of format f
 * (qweights.js layoutOf), W's offset and stride, the tensor scale, then the
 * product's as og_check_product with A read and B not, then W's whole
 * images), then WebGPU's own. Returns {m, n, k, batch, lda, empty,
 * activation, bias, a, w, c (bindings as checkOperand makes them), push
 * (the uniform's values, as qgemm_decode.tmpl reads them)}.
 */
export function checkQGemm(lim, elemBytes, f, layoutOf, args) {
  const op = 'qgemm';
  const v = {};
  for (const name of ['m', 'n', 'k', 'batch', 'a_offset', 'w_offset', 'c_offset', 'stride_a', 'stride_w', 'stride_c', 'lda', 'ldc']) {
    v[name] = int(op, args, name);
  }
  // The weights' own fields first: the layout needs N and K of at least 1.
  checkFields(op, [['M', v.m], ['N', v.n], ['K', v.k], ['batch', v.batch], ['w_offset', v.w_offset], ['stride_w', v.stride_w]]);
  // Refused for any N (an empty call too), so N = 0 asks about one row.
  const lay = layoutOf(f, v.n > 0 ? v.n : 1, v.k);
  if (lay.why) refuse(`qgemm: ${lay.why}`);
  if (v.w_offset % 16) refuse(`qgemm: w_offset (${v.w_offset} bytes) is not a multiple of 16`);
  if (v.stride_w % 16) refuse(`qgemm: stride_w (${v.stride_w} bytes) is not a multiple of 16`);
  const batch = v.batch === 0 ? 1 : v.batch;
  if (batch > 1 && v.stride_w !== 0 && BigInt(v.stride_w) < lay.bytes) {
    refuse(`qgemm: stride_w (${v.stride_w} bytes) is less than one weight matrix (${lay.bytes} bytes): stacked matrices would overlap`);
  }
  // A float in C: rounded to float32 first (past its range it is infinite).
  const ts = typeof args.tensor_scale === 'number' ? Math.fround(args.tensor_scale) : args.tensor_scale === undefined ? 0 : NaN;
  if (!(ts >= 0 && ts <= 3.4028234663852886e38)) refuse(`qgemm: tensor_scale (${printfG(ts)}) is not a finite non-negative number`);
  // og_check_product of A * W^T: W as B stored N x K, its words not checked there.
  checkFields(op, [['M', v.m], ['N', v.n], ['K', v.k], ['batch', v.batch], ['a_offset', v.a_offset], ['b_offset', v.w_offset / 4],
    ['c_offset', v.c_offset], ['stride_a', v.stride_a], ['stride_b', v.stride_w / 4], ['stride_c', v.stride_c],
    ['lda', v.lda], ['ldb', v.k], ['ldc', v.ldc]]);
  checkLd(op, 'lda', v.lda, 'K', v.k, ' for A not transposed');
  checkLd(op, 'ldc', v.ldc, 'N', v.n, '');
  const bias = checkEpilogue(lim, op, args, v.n);
  const call = {
    ...v, batch, beta: Math.fround(args.beta ?? 0), activation: args.activation ?? 0, bias,
    a: null, w: null, c: null, push: null, empty: v.m === 0 || v.n === 0,
  };
  if (call.empty) return call;
  checkBatchOverlap(op, v.m, v.n, v.ldc, v.stride_c, batch);
  call.a = checkOperand(lim, op, 'A', args.a, elemBytes, v.a_offset, batch, v.stride_a, v.m, v.lda, v.k);
  call.c = checkOperand(lim, op, 'C', args.c, 4, v.c_offset, batch, v.stride_c, v.m, v.ldc, v.n);
  // W: the whole image of each matrix, as 32-bit words.
  const words = Number(lay.bytes / 4n);
  call.w = checkOperand(lim, op, 'W', args.w, 4, v.w_offset / 4, batch, v.stride_w / 4, 1, words, words);
  checkAliases(op, call.c, [['A', call.a], ['W', call.w], ['the bias', bias]]);
  const bits = new Uint32Array(new Float32Array([ts === 0 ? 1 : ts]).buffer)[0];
  // The GEMM's words for device addresses carry the planes' geometry, as in C.
  call.push = {
    M: v.m, N: v.n, K: v.k, lda: v.lda, ldb: lay.codeRowBytes / 4, ldc: v.ldc,
    off_a: call.a.elements, off_b: call.w.elements, off_c: call.c.elements,
    stride_a: v.stride_a, stride_b: v.stride_w / 4, stride_c: v.stride_c,
    alpha: 1, beta: call.beta, batch, ranges: 1, bias_off: bias?.elements ?? 0, epi: call.activation | (bias ? 4 : 0),
    scale_off: Number(lay.scalesAt / 4n), addr_a_lo: lay.scaleRowBytes, addr_a_hi: Number(lay.zerosAt / 4n),
    zero_a: lay.zeroRowBytes, zero_b: lay.block, addr_b_lo: bits,
  };
  return call;
}
