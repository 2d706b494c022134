// Kernel selection (runtime/plan/og_select.c): in Fast mode the exact
// tuned shape of the call's key (dtype, op(A), op(B)), else the nearest
// tuned shape, else the default tile; Deterministic mode always the default
// (docs/reference-design.md, "Invariants" 1: it never depends on the database). The records are
// those the build exported into the kernel table (web/tools/generate-kernels.js).

/** Tile parameters from their text (bm=64,bn=64,...,split=rule), numbers where numeric. */
export function parseParams(text) {
  const p = {};
  for (const item of text.split(',')) {
    const [key, value] = item.split('=');
    p[key] = /^\d+$/.test(value) ? Number(value) : value;
  }
  return p;
}

/** Squared distance of two shapes in log space; sizes below 1 count as 1 (db/og_db_select.c). */
function distance(a, b) {
  let d = 0;
  for (let i = 0; i < 4; i++) {
    const l = Math.log(Math.max(1, a[i]) / Math.max(1, b[i]));
    d += l * l;
  }
  return d;
}

/**
 * The kernel for a call of template 'gemm_tile', 'gemm_fewrows',
 * 'gemm_decode' or 'conv' (a convolution's own tile records, og_select_conv):
 * {template, text, params, kernels, source} where kernels is {gemm, planes}
 * (the tile) or {gemm} (few rows, the decode kernel) and source 'default',
 * 'db' or 'db, nearest shape'. A decode record of another M keeps its
 * columns, slices and loads, its rows those of the fallback (og_select's
 * rows_follow_m). key: the records' key ('dtype.NT'; a convolution's
 * 'dtype.op.layout.weights'); kernelKey: the kernels' in the table (the
 * same; a convolution's 'dtype.layout.weights'). fallback: the default's
 * params text. usable(kernels) says whether the device can run a record's
 * kernels (else it is passed over, as og_select passes over a record
 * og_params_check refuses).
 */
export function chooseKernel(table, template, key, mode, shape, fallback, usable, kernelKey = key) {
  const fewRows = template === 'gemm_fewrows', decode = template === 'gemm_decode';
  const group = fewRows ? table.fewRows : decode ? table.decode : template === 'conv' ? table.conv.tiles : table.tiles;
  // The tile's kernels are the rule's whatever a record's split; its split decides the ranges.
  const id = (params) => (fewRows || decode ? params : params.replace(/split=[^,]*/, 'split=rule'));
  const runs = (params) => group[id(params)]?.[kernelKey] && usable(group[id(params)][kernelKey]);
  let best = null;
  if (mode === 'fast') {
    for (const r of table.records) {
      if (r.template !== template || r.key !== key || !runs(r.params)) continue;
      const exact = r.shape.every((v, i) => v === shape[i]);
      const d = exact ? 0 : distance(r.shape, shape);
      const better = !best || (exact !== best.exact ? exact
        : Math.abs(d - best.d) > 1e-12 * Math.max(d, best.d) ? d < best.d : r.gflops > best.gflops);
      if (better) best = { exact, d, gflops: r.gflops, params: r.params, m: r.shape[0] };
    }
  }
  if (decode && best && !best.exact && best.m !== shape[0]) {
    const follow = best.params.replace(/rows=\d+/, /rows=\d+/.exec(fallback)[0]);
    if (runs(follow)) best.params = follow;
  }
  const text = best ? best.params : fallback;
  const source = !best ? 'default' : best.exact ? 'db' : 'db, nearest shape';
  return { template, text, params: parseParams(text), kernels: group[id(text)][kernelKey], source };
}
