// Tuned parameters exported from a tuning database into a kernel table
// (web/tools/generate-kernels.js), and the runtime's Fast mode choosing
// them as og_select does: the exact shape, else the nearest, else the
// default; Deterministic mode never. A small database made here with
// ogtune import: records of a test device, one WGSL cannot run (vec=4),
// one of another device and one of an older template (stale); few rows'
// records, one beyond WebGPU's default invocations; the decode kernel's
// records, one with 16-byte loads (vec=4), whose rows follow M at another
// M; a convolution's own
// records (op conv:3x3:s1x1:d1x1, NCHW and KCRS), which it takes before the
// GEMM's record of its implicit GEMM.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { openDevice } from './gpu.js';
import { ogtune } from './kernels.js';
import { createConv, createGemm } from './module.js';
import { convOperands, runConvCase } from './conv.js';
import { operands, release, runCase } from './runtime.js';

const dir = mkdtempSync(join(tmpdir(), 'onegpu-web-'));
const here = resolve(import.meta.dirname);
let device, table;

/** The current hashes of the templates, from the shipped pre-tuned database (test_travel_dumps keeps it current). */
function templateHashes() {
  // The dump passes node's default 1 MiB of output: allow 256 MiB.
  const sql = execFileSync(ogtune, ['export', '--db', process.env.OG_PRETUNED_DB || resolve(here, '../../build/pretuned/llvmpipe.db')], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const hash = (template) => new RegExp(`'${template}', '([0-9a-f]{16})'`).exec(sql)[1];
  return { gemm_tile: hash('gemm_tile'), gemm_fewrows: hash('gemm_fewrows'), gemm_decode: hash('gemm_decode') };
}

const tiles = {
  small: 'bm=32,bn=32,bk=16,tm=2,tn=2,wgx=16,wgy=16,pad=1,load=staged,acc=blocked,vec=1,src=ssbo,split=rule',
  vec4: 'bm=64,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=16,pad=0,load=direct,acc=blocked,vec=4,src=ssbo,split=rule',
  chain: 'bm=32,bn=64,bk=16,tm=4,tn=4,wgx=16,wgy=8,pad=0,load=direct,acc=chain,vec=1,src=ssbo,split=1',
  fewRows: 'variant=fewrows,cols=32,slices=8,vec=1',
  fewRowsBig: 'variant=fewrows,cols=128,slices=4,vec=1', // 512 invocations: more than WGSL's 256
  decode: 'variant=decode,rows=8,cols=8,slices=16,tn=1,vec=1',
  decodeVec4: 'variant=decode,rows=8,cols=4,slices=32,tn=1,vec=4',
};

function database(hashes) {
  const device = (name, id) => `INSERT INTO devices (vendor_id, device_id, driver_id, driver_version, name, driver_name, driver_info, pipeline_cache_uuid) VALUES (4318, ${id}, 1, 1, '${name}', 'test', 'test', '00000000000000000000000000000000');`;
  const record = (id, dtype, ta, tb, shape, params, gflops, h = hashes.gemm_tile, template = 'gemm_tile', op = 'gemm') => `INSERT INTO records (device, op, dtype, mode, trans_a, trans_b, m, n, k, batch, template_name, template_hash, params, median_us, gflops, samples, max_error, accepted, reason, created, source, spread, memory) VALUES ((SELECT id FROM devices WHERE vendor_id = 4318 AND device_id = ${id} AND driver_id = 1 AND driver_version = 1 AND driver_info = 'test' AND pipeline_cache_uuid = '00000000000000000000000000000000'), '${op}', '${dtype}', 'fast', ${ta}, ${tb}, ${shape.join(', ')}, '${template}', '${h}', '${params}', 100.0, ${gflops}, 10, 1e-7, 1, '', 1796000000, 'test', 0.01, 'device-local');`;
  return ['BEGIN;', device('Test WebGPU adapter', 1), device('Other adapter', 2),
    record(1, 'f32', 0, 0, [256, 256, 256, 1], tiles.small, 5),
    record(1, 'f32', 0, 0, [256, 256, 256, 1], tiles.vec4, 50),
    record(1, 'f16', 1, 0, [100, 100, 100, 1], tiles.chain, 3),
    record(2, 'bf16', 0, 0, [100, 100, 100, 1], tiles.small, 9),
    record(1, 'bf16', 0, 0, [100, 100, 100, 1], tiles.small, 9, '0123456789abcdef'),
    record(1, 'f32', 0, 0, [1, 768, 768, 1], tiles.fewRows, 2, hashes.gemm_fewrows, 'gemm_fewrows'),
    record(1, 'f32', 0, 0, [2, 768, 768, 1], tiles.fewRowsBig, 4, hashes.gemm_fewrows, 'gemm_fewrows'),
    record(1, 'f16', 0, 1, [8, 512, 512, 1], tiles.decode, 3, hashes.gemm_decode, 'gemm_decode'),
    record(1, 'f16', 0, 1, [8, 512, 512, 1], tiles.decodeVec4, 6, hashes.gemm_decode, 'gemm_decode'),
    // The convolution's implicit GEMM of 1x8x12x12/16x3x3/p1 (144 pixels x 16 x 72), and the
    // GEMM's record of the same shape (B transposed), which the convolution's own record beats.
    // bfloat16: the float32 GEMM's cases above keep their own records.
    record(1, 'bf16', 1, 1, [144, 16, 72, 1], tiles.chain, 2, hashes.gemm_tile, 'gemm_tile', 'conv:3x3:s1x1:d1x1'),
    record(1, 'bf16', 0, 1, [144, 16, 72, 1], tiles.small, 7),
    'COMMIT;'].join('\n');
}

before(async () => {
  const sql = join(dir, 'tuning.sql'), db = join(dir, 'tuning.db'), out = join(dir, 'kernels.js');
  writeFileSync(sql, database(templateHashes()));
  execFileSync(ogtune, ['import', sql, '--db', db], { stdio: 'ignore' });
  execFileSync(process.execPath, [resolve(here, '../tools/generate-kernels.js'), '--ogtune', ogtune, '--out', out, '--db', db, '--device', 'Test WebGPU']);
  table = (await import(out)).default;
  device = await openDevice('opengl');
});
after(() => {
  device?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

test('the export keeps the records WGSL can run, of the device named, with the current template', () => {
  assert.deepEqual(table.records.map((r) => [r.template, r.key, r.shape.join('x'), r.params]), [
    ['gemm_tile', 'f32.NN', '256x256x256x1', tiles.small],
    ['gemm_tile', 'f16.TN', '100x100x100x1', tiles.chain],
    ['gemm_fewrows', 'f32.NN', '1x768x768x1', tiles.fewRows],
    ['gemm_decode', 'f16.NT', '8x512x512x1', tiles.decode],
    ['conv', 'bf16.conv:3x3:s1x1:d1x1.nchw.kcrs', '144x16x72x1', tiles.chain],
    ['gemm_tile', 'bf16.NT', '144x16x72x1', tiles.small],
  ]);
  const skipped = Object.fromEntries(table.skipped.map((r) => [r.params, r.why]));
  assert.deepEqual(Object.keys(skipped).sort(), [tiles.fewRowsBig, tiles.vec4, tiles.decodeVec4].sort());
  assert.match(skipped[tiles.vec4], /wgsl: vec=4/);
  assert.match(skipped[tiles.decodeVec4], /wgsl: vec=4/);
  // The decode record's kernels at every rows, for the rows that follow M.
  for (const rows of [1, 2, 4, 8, 16]) assert.ok(table.decode[tiles.decode.replace('rows=8', `rows=${rows}`)]['f16.NT'].gemm);
  assert.match(skipped[tiles.fewRowsBig], /512 invocations/);
  assert.ok(table.tiles[tiles.small]['f32.NN'].gemm.wgsl.includes('@workgroup_size(16, 16, 1)'));
  assert.ok(table.tiles[tiles.chain.replace('split=1', 'split=rule')]['f16.TN'].planes);
});

test('Fast mode runs the exact, then the nearest tuned shape; Deterministic mode the default', async () => {
  const fast32 = createGemm(device, { kernels: table });
  const fast16 = createGemm(device, { dtype: 'f16', kernels: table });
  const det32 = createGemm(device, { mode: 'deterministic', kernels: table });
  const cases = [
    [fast32, { M: 256, N: 256, K: 256 }, `gemm_tile ${tiles.small} (db); 4 k ranges of 64`],
    [fast32, { M: 70, N: 200, K: 90, batch: 2 }, `gemm_tile ${tiles.small} (db, nearest shape)`],
    [fast32, { M: 70, N: 200, K: 90, transB: true }, `gemm_tile ${table.defaultTile} (default)`],
    [det32, { M: 256, N: 256, K: 256 }, `gemm_tile ${table.defaultTile} (default); 4 k ranges of 64`],
    // split=1: never split, where the rule would cut K = 500 into ranges.
    [fast16, { dtype: 'f16', M: 90, N: 100, K: 500, transA: true }, `gemm_tile ${tiles.chain} (db, nearest shape)`],
    // Few rows: the record WGSL can run (WebGPU's 256 invocations leave out the one of 512).
    [fast32, { M: 2, N: 700, K: 700 }, `gemm_fewrows ${tiles.fewRows} (db, nearest shape)`],
    [fast32, { M: 3, N: 700, K: 700, transB: true }, 'gemm_fewrows variant=fewrows,cols=8,slices=32,vec=1 (default)'],
    // The decode kernel: the exact shape, the nearest with its own M's rows, or this M's; B K x N has no record.
    [fast16, { dtype: 'f16', M: 8, N: 512, K: 512, transB: true }, `gemm_decode ${tiles.decode} (db)`],
    [fast16, { dtype: 'f16', M: 8, N: 300, K: 200, transB: true }, `gemm_decode ${tiles.decode} (db, nearest shape)`],
    [fast16, { dtype: 'f16', M: 3, N: 300, K: 200, transB: true }, `gemm_decode ${tiles.decode.replace('rows=8', 'rows=4')} (db, nearest shape)`],
    [fast16, { dtype: 'f16', M: 3, N: 300, K: 200 }, 'gemm_decode variant=decode,rows=4,cols=64,slices=4,tn=8,vec=1 (default)'],
  ];
  for (const [gemm, spec, description] of cases) {
    const o = operands(device, spec);
    assert.equal(gemm.describe(o.args), description);
    release(o);
    const r = await runCase(device, gemm, spec);
    assert.ok(r.ok, `${description}: error ${r.maxErr} of ${r.maxRef}; ${r.outside[0] ?? ''} ${r.nonFinite[0] ?? ''}`);
  }
});

test('a convolution in Fast mode takes its own record, exact then nearest, before the GEMM\'s; Deterministic mode the default', async () => {
  const fast = createConv(device, { dtype: 'bf16', kernels: table });
  const det = createConv(device, { dtype: 'bf16', mode: 'deterministic', kernels: table });
  const chainRule = tiles.chain.replace('split=1', 'split=rule');
  assert.ok(table.conv.tiles[chainRule]['bf16.nchw.kcrs'].gemm, 'the record\'s layouts are exported');
  assert.equal(table.conv.tiles[chainRule]['bf16.nhwc.krsc'], undefined, 'other layouts are not');
  const nchw = { dtype: 'bf16', layout: 1, weights: 1, c: 8, h: 12, w: 12, k: 16, r: 3, s: 3, pad_top: 1, pad_bottom: 1, pad_left: 1, pad_right: 1, bias: true };
  const implicit = (spec) => `implicit GEMM ${spec.h * spec.w}x${spec.k}x${spec.c * 9} x ${spec.n ?? 1} products`;
  const cases = [
    [fast, nchw, `conv NCHW KCRS, ${implicit(nchw)}: gemm_tile ${tiles.chain} (the convolution's record)`],
    [fast, { ...nchw, n: 2, h: 10 }, `conv NCHW KCRS, implicit GEMM 120x16x72 x 2 products: gemm_tile ${tiles.chain} (the convolution's record, nearest shape)`],
    // Another op (a 5x5 filter) or other layouts: the GEMM's record of the implicit GEMM, nearest.
    [fast, { ...nchw, r: 5, s: 5, pad_top: 2, pad_bottom: 2, pad_left: 2, pad_right: 2 }, `conv NCHW KCRS, implicit GEMM 144x16x200 x 1 products: gemm_tile ${tiles.small} (the GEMM's record, nearest shape); 4 k ranges of 64`],
    [fast, { ...nchw, layout: 0, weights: 0 }, `conv NHWC KRSC, ${implicit(nchw)}: gemm_tile ${tiles.small} (the GEMM's record)`],
    [det, nchw, `conv NCHW KCRS, ${implicit(nchw)}: gemm_tile ${table.defaultTile} (default)`],
  ];
  for (const [conv, spec, description] of cases) {
    const o = convOperands(device, spec);
    assert.equal(conv.describe(o.args), description);
    for (const b of Object.values(o.buffers)) b.destroy();
    const r = await runConvCase(device, conv, spec);
    assert.ok(r.ok, `${description}: error ${r.maxErr} of ${r.maxRef}; ${r.outside[0] ?? ''} ${r.nonFinite[0] ?? ''}`);
  }
  fast.destroy();
  det.destroy();
});
