// The argument checks of web/onegpu/check.js against tests/data/arg_checks.txt,
// the cases tests/test_arg_checks.c runs through the C runtime's checks: each
// case's call goes to checkGemm, checkElementwise, checkConv or checkQGemm
// with buffers of the case's sizes and no device, and the outcome must be the
// case's (success, or the code and the exact message). OG_ARG_CHECKS names the
// file (CTest sets it); by default the checkout's.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { checkConv, checkElementwise, checkGemm, checkQGemm } from '../onegpu/check.js';
import { layoutOf, parseQFormat } from '../onegpu/qweights.js';

// check.js reads GPUBufferUsage.STORAGE (WebGPU's value) from the global scope.
globalThis.GPUBufferUsage ??= { STORAGE: 0x80, COPY_DST: 0x08 };

const file = process.env.OG_ARG_CHECKS || resolve(import.meta.dirname, '../../tests/data/arg_checks.txt');

// WebGPU's defaults, which the C suite uses too: a 256-byte binding alignment
// and a 2^27-byte binding.
const limits = { bindAlign: 256n, maxBinding: 1n << 27n };
const elementBytes = { f32: 4, f16: 2, bf16: 2 };
const buffers = { gemm: ['a', 'b', 'c', 'bias'], elementwise: ['c', 'bias'], conv: ['x', 'wt', 'y', 'bias'], qgemm: ['a', 'w', 'c', 'bias'] };

/** A number of the file: decimal, inf, -inf or nan, as C's strtof reads them. */
function number(text) {
  const special = { inf: Infinity, '-inf': -Infinity, nan: NaN };
  if (text in special) return special[text];
  const v = Number(text);
  assert.ok(text !== '' && !Number.isNaN(v), `${text} is not a number`);
  return v;
}

/** The case's call: op's args from KEY=VALUE inputs, the dtype and the weight format. */
function callOf(op, inputs) {
  const args = {}, made = {};
  let dtype = 'f32', format = null;
  for (const token of inputs) {
    const [key, value] = token.split(/=(.*)/s);
    if (key === 'dtype') dtype = value;
    else if (key === 'format') format = parseQFormat(value);
    else if (buffers[op]?.includes(key)) {
      if (value in made) args[key] = made[value];
      else if (value === 'object') args[key] = {};
      else {
        const noStorage = value.startsWith('nostorage:');
        const size = number(noStorage ? value.slice('nostorage:'.length) : value);
        args[key] = { size, usage: noStorage ? GPUBufferUsage.COPY_DST : GPUBufferUsage.STORAGE };
      }
      made[key] = args[key];
    } else args[key] = number(value);
  }
  assert.ok(dtype in elementBytes, `dtype ${dtype} is not f32, f16 or bf16`);
  return { args, elem: elementBytes[dtype], format };
}

function check(op, inputs) {
  const { args, elem, format } = callOf(op, inputs);
  if (op === 'gemm') return checkGemm(limits, elem, args);
  if (op === 'elementwise') return checkElementwise(limits, args);
  if (op === 'conv') return checkConv(limits, elem, args);
  if (op === 'qgemm') return checkQGemm(limits, elem, format, layoutOf, args);
  throw new Error(`op ${op} is not gemm, elementwise, conv or qgemm`);
}

/** NAME OP INPUTS -> EXPECTED [-> EXPECTED IN JS], for every case line. */
const cases = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((line) => {
  const [call, c, js, ...rest] = line.split(' -> ');
  assert.ok(c !== undefined && rest.length === 0, `not NAME OP INPUTS -> EXPECTED [-> EXPECTED IN JS]: ${line}`);
  const [name, op, ...inputs] = call.split(' ');
  return { name, op, inputs, want: js ?? c };
});

test('every case of the shared argument-check file: check.js accepts or refuses as the case says', () => {
  let ran = 0, cOnly = 0;
  const failures = [];
  for (const { name, op, inputs, want } of cases) {
    if (want === '-') {
      cOnly++;
      continue;
    }
    ran++;
    let got;
    try {
      check(op, inputs);
      got = 'ok';
    } catch (e) {
      if (!e.code) throw e;
      got = e.code === 'unsupported' ? `[unsupported] ${e.message}` : e.message;
      assert.equal(e.code === 'unsupported' || e.code === 'invalid-argument', true, `${name}: code ${e.code}`);
    }
    if (got !== want) failures.push(`${name}:\n  got:      ${got}\n  expected: ${want}`);
  }
  console.log(`arg_checks (JS): ${cases.length} cases in ${file}, ${ran} run, ${cOnly} for the C runtime only`);
  assert.deepEqual(failures, []);
  // Every case line read and run or marked; the file is not empty.
  assert.equal(ran + cOnly, cases.length);
  assert.ok(ran >= 40, `only ${ran} cases run`);
});

test('a 1x1 convolution is the GEMM itself past 4 pixels only, as og_conv_geometry_check says', () => {
  const args = (h, w) => ({ n: 3, c: 4, h, w, k: 8, r: 1, s: 1, x: { size: 4 * 3 * 4 * h * w, usage: GPUBufferUsage.STORAGE },
    wt: { size: 4 * 32, usage: GPUBufferUsage.STORAGE }, y: { size: 4 * 3 * 8 * h * w, usage: GPUBufferUsage.STORAGE } });
  assert.equal(checkConv(limits, 4, args(2, 2)).gemm, false);
  assert.equal(checkConv(limits, 4, args(1, 5)).gemm, true);
  assert.equal(checkConv(limits, 4, { ...args(1, 5), layout: 1 }).gemm, false);
});
