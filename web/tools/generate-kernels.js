#!/usr/bin/env node
// Writes web/onegpu's kernel table (kernels.generated.js; CMake writes it
// into the build tree's copy of the module, build/web/onegpu): the WGSL that
// `ogtune gen --emit wgsl` generates from the templates, never hand-written,
// for the runtime's defaults (every dtype x op(A) x op(B), the tile and its
// split-k planes, the planes' reduction; few rows in the rule's three shapes
// for both layouts of B; the decode kernel's default for every dtype, layout
// of B and rows 1 to 16, powers of two; the elementwise scale, bias and activation kernels;
// the convolution's gathering tile and planes for every dtype x input layout
// x weight layout, and its reduction for each layout; the low-bit weight
// decode kernel of createQGemm for every format kind x dtype x rows 1 to 16,
// powers of two) and, with --db, for
// the tuned records of one device exported from a tuning database (the
// convolution's too for records of B transposed: without a record of its
// own, the convolution takes the GEMM's record for its implicit GEMM's
// shape).
//
//   node tools/generate-kernels.js --ogtune PATH --out FILE [--db DB --device NAME] [--integer-path]
//
// --integer-path: also the decode kernel's integer path (createQGemm's dot
// 1 and 2: int8 activations, docs/decode.md) for every format kind x dtype
// x rows; about twice the decode kernels' text, so not in the default table.
//
// --db DB --device NAME: the accepted, current (not stale) Fast-mode GEMM
// records (tile, few rows and the decode kernel, whose records come at every
// rows 1 to 16 as the nearest shape's rows follow M) and the convolutions' tile records (`ogtune
// tune --op conv`; template 'conv' in the table, key 'dtype.op.layout.weights')
// of every device of DB whose name contains
// NAME, read through `ogtune show --json`. For each template, key (dtype,
// op(A), op(B); a convolution's op and layouts) and shape the best
// record WGSL can run is kept as onegpu's selection keeps it (db/og_db_select.c:
// the highest GFLOP/s; among equals the newest); records whose parameters
// WGSL does not cover (ogtune refuses them: vec=4, src=texel) cannot compete
// and are listed in the table's `skipped`. CMake runs this at build time (web/CMakeLists.txt).
import { execFileSync } from 'node:child_process';
import { writeFileSync, renameSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { kernelEntry } from './kernel-entry.js';

const { values: opt } = parseArgs({
  options: {
    ogtune: { type: 'string' }, out: { type: 'string' }, db: { type: 'string' }, device: { type: 'string' },
    'integer-path': { type: 'boolean' },
  },
});
if (!opt.ogtune || !opt.out || !opt.db !== !opt.device) {
  console.error('usage: generate-kernels.js --ogtune PATH --out FILE [--db DB --device NAME] [--integer-path]');
  process.exit(2);
}

const dtypes = ['f32', 'f16', 'bf16'];
const layouts = ['NN', 'NT', 'TN', 'TT'];

function ogtune(args) {
  return execFileSync(opt.ogtune, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
}

/** One kernel: its WGSL and what the runtime needs to bind and launch it. */
function kernel(args) {
  return kernelEntry(ogtune(['gen', '--emit', 'wgsl', ...args]));
}

/** The struct Push fields (the uniform at binding 6), the same in every kernel. */
function pushFields(wgsl) {
  const body = /struct Push \{([^}]*)\}/.exec(wgsl)[1];
  return [...body.matchAll(/(\w+): (u32|i32|f32)/g)].map((m) => [m[1], m[2]]);
}

/** The tile's kernels for params text p (split set to the rule: the ranges are uniforms). */
function tileKernels(p, keys) {
  const params = p.replace(/split=[^,]*/, 'split=rule');
  const out = {};
  for (const key of keys) {
    const [dtype, layout] = key.split('.');
    const flags = ['--dtype', dtype, ...(layout[0] === 'T' ? ['--trans-a'] : []), ...(layout[1] === 'T' ? ['--trans-b'] : [])];
    out[key] = {
      gemm: kernel(['--params', params, '--kernel', 'gemm', ...flags]),
      planes: kernel(['--params', params, '--kernel', 'planes', ...flags]),
    };
  }
  return out;
}

const convLayouts = ['nhwc', 'nchw'];
const convWeights = ['krsc', 'kcrs'];

/**
 * The convolution's tile and planes for params text p (split=rule) and each
 * of dtypes: {'f32.nhwc.krsc': {gemm, planes}, ...}.
 */
function convKernels(p, dtypes_) {
  const params = p.replace(/split=[^,]*/, 'split=rule');
  const out = {};
  for (const dtype of dtypes_) for (const layout of convLayouts) for (const weights of convWeights) {
    const flags = ['--params', params, '--dtype', dtype, '--conv', `${layout},${weights}`];
    out[`${dtype}.${layout}.${weights}`] = { gemm: kernel([...flags, '--kernel', 'gemm']), planes: kernel([...flags, '--kernel', 'planes']) };
  }
  return out;
}

/** Few rows' kernel for params text p (variant=fewrows,...) and B's layout 'N' or 'T'. */
function fewRowsKernel(p, transB) {
  return { gemm: kernel(['--params', p, '--kernel', 'gemm', ...(transB === 'T' ? ['--trans-b'] : [])]) };
}

// The few-rows shapes of the rule (og_params_fewrows), read one element at a
// time (vec=1: WGSL has no vector loads; vec never changes a slice's chain).
const fewRowsDefaults = {
  N: 'variant=fewrows,cols=16,slices=16,vec=1', // B stored K x N, N < 8192
  wide: 'variant=fewrows,cols=32,slices=8,vec=1', // B stored K x N, N >= 8192
  T: 'variant=fewrows,cols=8,slices=32,vec=1', // B stored N x K
};

// The decode kernel's defaults (og_params_decode) with word loads (vec=1,
// WGSL's; vec never changes a slice's chain), by B's layout and rows: B
// N x K 4 columns of 32 k slices, K x N 64 columns of 4 slices, 8
// neighbouring columns an invocation.
const decodeRowCounts = [1, 2, 4, 8, 16];
const decodeText = (layout, rows) => (layout === 'T' ? `variant=decode,rows=${rows},cols=4,slices=32,tn=1,vec=1`
  : `variant=decode,rows=${rows},cols=64,slices=4,tn=8,vec=1`);
const decodeDefaults = Object.fromEntries(['N', 'T'].map((l) => [l, Object.fromEntries(decodeRowCounts.map((r) => [r, decodeText(l, r)]))]));
/** The decode kernel of params text p for each key 'dtype.NN' / 'dtype.NT' (float32's from 8 rows: 1..4 are few rows'). */
function decodeKernels(p, keys) {
  const rows = Number(/rows=(\d+)/.exec(p)[1]);
  const out = {};
  for (const key of keys) {
    const [dtype, layout] = key.split('.');
    if (dtype === 'f32' && rows < 8) continue;
    out[key] = { gemm: kernel(['--params', p, '--kernel', 'gemm', '--dtype', dtype, ...(layout[1] === 'T' ? ['--trans-b'] : [])]) };
  }
  return out;
}
const decodeKeys = (layout) => dtypes.map((d) => `${d}.N${layout}`);

// The default tile (og_params_default, the reference design's 64x64x16) as
// ogtune prints parameters; checked against ogtune's own default below, as
// `ogtune select` would need a Vulkan device to print it.
const defaultTile = 'bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=staged,acc=blocked,vec=1,src=ssbo,split=rule';
if (ogtune(['gen', '--emit', 'wgsl']) !== ogtune(['gen', '--emit', 'wgsl', '--params', defaultTile])) {
  console.error('generate-kernels.js: ogtune\'s default tile is no longer ' + defaultTile + ' (gen/families/og_family_tile.c, og_params_default)');
  process.exit(1);
}
// The low-bit decode kernel (og_params_qdecode: 4 columns of 32 k slices,
// ROWS the power of two that covers M up to 16) with word loads, WGSL's
// (vec=1), for each kind of weight format: the formats' texts without
// INT4's group, which is a uniform (qweights.js qformatKey). Checked
// against ogtune's own default (rows=1) as the tile is.
const qdecodeParams = (rows) => `variant=qdecode,rows=${rows},cols=4,slices=32,vec=1`;
if (ogtune(['gen', '--emit', 'wgsl', '--op', 'qgemm']) !== ogtune(['gen', '--emit', 'wgsl', '--op', 'qgemm', '--params', qdecodeParams(1)])) {
  console.error('generate-kernels.js: ogtune\'s default decode kernel is no longer ' + qdecodeParams(1) + ' (gen/families/og_family_qdecode.c, og_params_qdecode)');
  process.exit(1);
}
const qformats = ['mxfp4', 'nvfp4', 'q8_0', 'q4_k', 'q6_k', ...['f16', 'bf16'].flatMap((s) => ['none', 'uint4', 'float'].map((z) => `int4:${s}:${z}`))];
// Above 16 rows the prefill tile (og_params_qprefill: the default tile,
// unsplit, decoding each weight as it loads it; W is N x K, so --trans-b).
const qprefillParams = defaultTile.replace('split=rule', 'split=1');
function qgemmKernels() {
  const out = {};
  const rows = [1, 2, 4, 8, 16], dots = opt['integer-path'] ? [0, 1, 2] : [0];
  const decode = dots.flatMap((dot) => rows.map((r) => qdecodeParams(r) + (dot ? `,dot=${dot}` : '')));
  for (const params of decode.concat(qprefillParams)) {
    out[params] = {};
    const tile = params === qprefillParams ? ['--trans-b'] : [];
    for (const dtype of dtypes) for (const f of qformats) {
      out[params][`${dtype}.${f}`] = kernel(['--op', 'qgemm', '--weights', f, '--dtype', dtype, '--params', params, ...tile]);
    }
  }
  return out;
}

const table = {
  defaultTile,
  tiles: { [defaultTile]: tileKernels(defaultTile, dtypes.flatMap((d) => layouts.map((l) => `${d}.${l}`))) },
  reduce: kernel(['--kernel', 'reduce']),
  decodeDefaults,
  decode: Object.fromEntries(['N', 'T'].flatMap((l) => decodeRowCounts.map((r) => [decodeText(l, r), decodeKernels(decodeText(l, r), decodeKeys(l))]))),
  fewRowsDefaults,
  fewRows: {
    [fewRowsDefaults.N]: { 'f32.NN': fewRowsKernel(fewRowsDefaults.N, 'N') },
    [fewRowsDefaults.wide]: { 'f32.NN': fewRowsKernel(fewRowsDefaults.wide, 'N') },
    [fewRowsDefaults.T]: { 'f32.NT': fewRowsKernel(fewRowsDefaults.T, 'T') },
  },
  elementwise: { scale: kernel(['--kernel', 'scale']), bias: kernel(['--kernel', 'bias']), activate: kernel(['--kernel', 'activate']) },
  // The reduction writes by the output layout only (conv_gather.tmpl's og_conv_c).
  conv: {
    tiles: { [defaultTile]: convKernels(defaultTile, dtypes) },
    reduce: Object.fromEntries(convLayouts.map((l) => [l, kernel(['--kernel', 'reduce', '--conv', `${l},krsc`])])),
  },
  // createQGemm's decode kernels and prefill tile: {params: {'dtype.format': kernel}}.
  qprefill: qprefillParams,
  qgemm: qgemmKernels(),
  records: [],
  skipped: [],
  database: null,
};
table.pushFields = pushFields(table.reduce.wgsl);

if (opt.db) {
  const rows = JSON.parse(ogtune(['show', '--json', '--db', opt.db]));
  const best = new Map();
  // Oldest first: a later record of equal GFLOP/s replaces an earlier one.
  rows.sort((x, y) => x.created - y.created);
  for (const r of rows) {
    // A convolution's own records (op conv:RxS:sHxW:dHxW; trans_a: NCHW, trans_b: KCRS) are its tile's.
    const conv = r.op.startsWith('conv:');
    if (!r.device.includes(opt.device) || (r.op !== 'gemm' && !conv) || r.mode !== 'fast' || !r.accepted || r.stale) continue;
    if (!['gemm_tile', 'gemm_fewrows', 'gemm_decode'].includes(r.template) || !dtypes.includes(r.dtype)) continue;
    if (conv && r.template !== 'gemm_tile') continue;
    const layouts = `${r.trans_a ? 'nchw' : 'nhwc'}.${r.trans_b ? 'kcrs' : 'krsc'}`;
    const key = conv ? `${r.dtype}.${r.op}.${layouts}` : `${r.dtype}.${r.trans_a ? 'T' : 'N'}${r.trans_b ? 'T' : 'N'}`;
    const template = conv ? 'conv' : r.template;
    const fewRows = r.template === 'gemm_fewrows', decode = r.template === 'gemm_decode';
    const params = fewRows || decode ? r.params : r.params.replace(/^variant=tile,/, '');
    const id = fewRows || decode ? params : params.replace(/split=[^,]*/, 'split=rule');
    const group = fewRows ? table.fewRows : decode ? table.decode : table.tiles;
    try {
      if (conv) {
        if (!table.conv.tiles[id]?.[`${r.dtype}.${layouts}`]) Object.assign(table.conv.tiles[id] ??= {}, convKernels(params, [r.dtype]));
      } else if (decode) {
        for (const rows of decodeRowCounts) {
          const at = params.replace(/rows=\d+/, `rows=${rows}`);
          if (!group[at]?.[key]) Object.assign(group[at] ??= {}, decodeKernels(at, [key]));
        }
      } else if (!group[id]?.[key]) {
        (group[id] ??= {})[key] = fewRows ? fewRowsKernel(params, key[4]) : tileKernels(params, [key])[key];
      }
      if (!conv && !fewRows && !decode && key.endsWith('.NT') && !table.conv.tiles[id]?.[`${r.dtype}.nhwc.krsc`]) {
        Object.assign(table.conv.tiles[id] ??= {}, convKernels(params, [r.dtype]));
      }
    } catch (e) {
      table.skipped.push({ template, key, shape: r.shape, params, why: String(e.stderr).trim() });
      continue;
    }
    const shapeId = `${template} ${key} ${r.shape.join('x')}`;
    if (!best.has(shapeId) || r.gflops >= best.get(shapeId).gflops) {
      best.set(shapeId, { template, key, shape: r.shape, params, gflops: r.gflops, device: r.device });
    }
  }
  // Kernels of records that lost to a better one are not shipped.
  const id = (r) => (['gemm_fewrows', 'gemm_decode'].includes(r.template) ? r.params : r.params.replace(/split=[^,]*/, 'split=rule'));
  const used = new Set([...best.values()].flatMap((r) => (r.template === 'gemm_decode'
    ? decodeRowCounts.map((rows) => `${r.params.replace(/rows=\d+/, `rows=${rows}`)} ${r.key}`) : [`${id(r)} ${r.key}`])));
  const defaults = new Set([defaultTile, ...Object.values(fewRowsDefaults), ...Object.values(decodeDefaults).flatMap(Object.values)]);
  for (const group of [table.tiles, table.fewRows, table.decode]) {
    for (const [params, keys] of Object.entries(group)) {
      if (defaults.has(params)) continue;
      for (const key of Object.keys(keys)) if (!used.has(`${params} ${key}`)) delete keys[key];
      if (!Object.keys(keys).length) delete group[params];
    }
  }
  // A convolution's tile serves a GEMM record of B transposed (every layout) or its own records' layouts.
  const convKey = (r) => { const [dtype, , layout, weights] = r.key.split('.'); return `${dtype}.${layout}.${weights}`; };
  const usedConv = new Set([...best.values()].filter((r) => r.template === 'conv').map((r) => `${id(r)} ${convKey(r)}`));
  for (const [params, keys] of Object.entries(table.conv.tiles)) {
    if (params === defaultTile) continue;
    for (const key of Object.keys(keys)) {
      if (!used.has(`${params} ${key.split('.')[0]}.NT`) && !usedConv.has(`${params} ${key}`)) delete keys[key];
    }
    if (!Object.keys(keys).length) delete table.conv.tiles[params];
  }
  table.records = [...best.values()];
  table.database = { path: opt.db, device: opt.device };
}

const text = `// Generated by web/tools/generate-kernels.js from ogtune's WGSL: do not edit.
export default ${JSON.stringify(table)};
`;
writeFileSync(`${opt.out}.tmp`, text);
renameSync(`${opt.out}.tmp`, opt.out);
