// WGSL kernels as the build generates them (`ogtune gen --emit wgsl`), never
// hand-written copies. OG_OGTUNE names the ogtune to run (CTest sets it);
// otherwise ../../build/ogtune.
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const ogtune = process.env.OG_OGTUNE || resolve(here, '../../build/ogtune');
export { kernelEntry } from '../tools/kernel-entry.js';

/** The tile parameters as ogtune reads them, from an object. */
export function paramText(p) {
  return Object.entries(p).map(([k, v]) => `${k}=${v}`).join(',');
}

/** The tile parameters of `base` with `changes`, as an object. */
export function tile(changes = {}) {
  return {
    bm: 32, bn: 32, bk: 16, tm: 2, tn: 2, wgx: 16, wgy: 16, pad: 1,
    load: 'staged', acc: 'blocked', vec: 1, src: 'ssbo', split: 1, ...changes,
  };
}

/**
 * WGSL text of one kernel: kernel 'gemm', 'planes' or 'reduce'; dtype f32,
 * f16 or bf16; conv a convolution's layouts ('nhwc,krsc', ...; B is then
 * transposed); weights a low-bit weight format's text (`--op qgemm
 * --weights`: the decode kernel with params variant=qdecode,...). Throws
 * with ogtune's message when it refuses.
 */
export function generate({ params = tile(), dtype = 'f32', transA = false, transB = false, kernel = 'gemm', conv = null, weights = null } = {}) {
  const args = ['gen', '--emit', 'wgsl', '--params', paramText(params), '--dtype', dtype, '--kernel', kernel];
  if (transA) args.push('--trans-a');
  if (transB) args.push('--trans-b');
  if (conv) args.push('--conv', conv);
  if (weights) args.push('--op', 'qgemm', '--weights', weights);
  return execFileSync(ogtune, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** ogtune's refusal of a kernel: its message, or null when it generates. */
export function refusal(options) {
  try {
    generate(options);
    return null;
  } catch (e) {
    return String(e.stderr);
  }
}

/** The fields of the kernel's `struct Push` (its uniform at binding 6), in order. */
export function pushFields(wgsl) {
  const body = /struct Push \{([^}]*)\}/.exec(wgsl)[1];
  return [...body.matchAll(/(\w+): (u32|i32|f32)/g)].map((m) => ({ name: m[1], type: m[2] }));
}

/** The kernel's @workgroup_size as [x, y, z]. */
export function workgroupSize(wgsl) {
  return /@workgroup_size\((\d+), (\d+), (\d+)\)/.exec(wgsl).slice(1, 4).map(Number);
}

/** Bytes of var<workgroup> arrays of 32-bit elements the kernel declares. */
export function workgroupBytes(wgsl) {
  return [...wgsl.matchAll(/var<workgroup> \w+: array<(?:f32|u32|i32), (\d+)>/g)]
    .reduce((sum, m) => sum + 4 * Number(m[1]), 0);
}

/**
 * Every kernel of a preset's tuning space for WebGPU's default limits
 * (`ogtune gen --emit wgsl --json --preset`): objects with params, kernel,
 * dtype, trans_a, trans_b and either text (the WGSL) or refused (why).
 */
export function space({ preset = 'quick', dtypes = 'f32,f16,bf16', transA = false, transB = false } = {}) {
  const args = ['gen', '--emit', 'wgsl', '--json', '--preset', preset, '--dtype', dtypes];
  if (transA) args.push('--trans-a');
  if (transB) args.push('--trans-b');
  const out = execFileSync(ogtune, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 });
  return out.trim().split('\n').map((line) => JSON.parse(line));
}
