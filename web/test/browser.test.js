// The WebGPU runtime in a real browser: Debian's Chromium, headless, on its
// WebGPU implementation (SwiftShader here), loads web/browser/index.html from
// a server of web/ on 127.0.0.1 (its onegpu/ the build's, with the kernel
// table: module.js) and logs the cases' results to its console,
// which --enable-logging=stderr prints. OG_CHROMIUM names the browser
// (CTest sets it; scripts/setup.sh --tests installs chromium): without one the test
// fails, it does not skip.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { moduleDir } from './module.js';

const root = resolve(import.meta.dirname, '..');
const types = { '.html': 'text/html', '.js': 'text/javascript' };

/**
 * Serves the files of web/, /onegpu/ from the build's copy (GET only,
 * nothing outside the two).
 */
function serve() {
  const server = createServer((req, res) => {
    const url = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const [dir, rel] = url.startsWith('/onegpu/') ? [moduleDir, url.slice('/onegpu'.length)] : [root, url];
    const path = normalize(join(dir, rel));
    if (!path.startsWith(dir + sep) || !types[extname(path)]) return res.writeHead(404).end();
    try {
      res.writeHead(200, { 'content-type': types[extname(path)] }).end(readFileSync(path));
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((done) => server.listen(0, '127.0.0.1', () => done(server)));
}

/**
 * Chromium's stderr after it loaded url: it ends when the page logged
 * ONEGPU-DONE or ONEGPU-ERROR (window.close() need not end a headless
 * browser), or after `seconds`.
 */
function chromium(url, seconds) {
  const profile = mkdtempSync(join(tmpdir(), 'onegpu-chromium-'));
  const args = ['--headless=new', '--no-sandbox', '--enable-unsafe-webgpu', `--user-data-dir=${profile}`,
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
    '--disable-quic', '--enable-logging=stderr', '--v=0', url];
  return new Promise((done, fail) => {
    const child = spawn(process.env.OG_CHROMIUM, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      if (/ONEGPU-(DONE|ERROR)/.test(err)) child.kill('SIGTERM');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), seconds * 1000);
    child.on('error', fail);
    child.on('close', () => {
      clearTimeout(timer);
      rmSync(profile, { recursive: true, force: true });
      done(err);
    });
  });
}

test('Chromium runs the page\'s GEMMs, convolution and low-bit weight product through web/onegpu and reports them correct', async () => {
  assert.ok(process.env.OG_CHROMIUM, 'no chromium: scripts/setup.sh --tests installs it (OG_CHROMIUM names it)');
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/browser/index.html`;
  // SwiftShader shares the cores with the other tests CTest runs: about 30 s
  // idle, 65 to over 90 s at a load average of 5 (2026-12-02); the
  // convolution's pipeline adds a fifth to a third (at a load of 10 the
  // GEMM cases alone took 150 s, 2026-12-04).
  const log = await chromium(url, 340).finally(() => server.close());
  const lines = (tag) => [...log.matchAll(new RegExp(`${tag} (.*)", source:`, 'g'))].map((m) => JSON.parse(m[1]));
  assert.deepEqual(lines('ONEGPU-ERROR'), []);
  const [done] = lines('ONEGPU-DONE');
  assert.ok(done, `the page did not finish:\n${log.slice(-3000)}`);
  const results = lines('ONEGPU-RESULT');
  assert.equal(results.length, done.cases);
  for (const r of results) {
    console.log(`${r.ok ? 'ok' : 'FAILED'}: ${r.name} on ${done.adapter}: ${JSON.stringify(r)}`);
    assert.ok(r.ok, `${r.name}: ${JSON.stringify(r)}`);
  }
  // The paths the cases are meant to take.
  const described = (start) => results.find((r) => r.name.startsWith(start))?.description;
  assert.match(described('float32 split-k'), /^gemm_tile .*; \d+ k ranges of \d+$/);
  assert.match(described('few rows'), /^gemm_fewrows /);
  assert.equal(described('decode kernel'), 'gemm_decode variant=decode,rows=8,cols=4,slices=32,tn=1,vec=1 (default)');
  assert.match(described('convolution'), /^conv NCHW KCRS, implicit GEMM 54x6x54 x 4 products: gemm_tile .*\(default\)$/);
  assert.equal(described('low-bit weights'), 'qgemm:nvfp4 qgemm_decode variant=qdecode,rows=4,cols=4,slices=32,vec=1 (default)');
});
