// The API process (`npm run api`) loads no inference or import code: starts the real entry with a
// loader hook that records every module it resolves, waits until it answers HTTP, and checks the
// list. A regex over source text could not see a transitive import; this sees what really loaded.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../src/main/embedded-redis.ts';

/** Polls `ready` until it is true (a condition, not a sleep), failing after `timeoutMs`. */
async function until(ready: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > end) throw new Error('not ready in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-api-loads-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function loadsOf(entry: string, ready: (port: number, record: string) => Promise<boolean>, env: Record<string, string> = {}): Promise<string[]> {
  const record = path.join(dir, `${path.basename(entry)}.txt`);
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/helpers/load-recorder.mjs', entry], {
    env: { ...process.env, LOAD_RECORD_FILE: record, REDIS_URL: inject('redisUrl'), REDIS_PREFIX: `iw-loads-${process.pid}`, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dir, LOG_LEVEL: 'error', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  try {
    await until(async () => {
      if (child.exitCode !== null) throw new Error(`${entry} exited (${child.exitCode}): ${stderr}`);
      return ready(port, record);
    }, 30_000);
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return fs.readFileSync(record, 'utf8').split('\n').filter(Boolean);
}

const FORBIDDEN: Array<[string, RegExp]> = [
  ['onnxruntime', /onnxruntime-(node|common)/],
  ['onnx-proto', /onnx-proto/],
  ['the TF.js importer and graph builders', /\/src\/tooling\//],
  ['pipeline code', /\/src\/pipelines\/[^/]+\/(pipeline|analysis|render|warp|compose)\.ts$|\/src\/pipelines\/index\.ts$/],
  ['pipeline steps', /\/src\/steps\//],
  ['model sessions', /\/src\/models\/(onnx|sessions)\.ts$/],
  ['inference threads', /\/src\/queue\/pipeline-(pool|thread)\.ts$|^node:worker_threads$/],
  ['TF.js', /@tensorflow\//],
];

describe('what the API process loads', () => {
  it('npm run api: HTTP, stores and the zod input specs, but no model, pipeline or importer code', async () => {
    const loads = await loadsOf('src/main/api.ts', async (port) => (await fetch(`http://127.0.0.1:${port}/health/live`).catch(() => null))?.ok === true);
    // The recorder works and the API really started: it loaded fastify and the spec table.
    expect(loads.some((u) => /\/node_modules\/fastify\//.test(u))).toBe(true);
    expect(loads.some((u) => u.endsWith('/src/pipelines/specs.ts'))).toBe(true);
    const bad = FORBIDDEN.flatMap(([what, re]) => loads.filter((u) => re.test(u)).map((u) => `${what}: ${u}`));
    expect(bad).toEqual([]);
  }, 60_000);

  const seen = (record: string, re: RegExp) => fs.existsSync(record) && fs.readFileSync(record, 'utf8').split('\n').some((u) => re.test(u));

  it("npm run worker: the event loop's thread loads no onnxruntime or pipeline code either (inference threads do)", async () => {
    // ESM links every static import before any module runs: once the consumer module is resolved,
    // the main thread's module graph is complete.
    const loads = await loadsOf('src/main/worker.ts', async (_port, record) => seen(record, /\/src\/queue\/task-worker\.ts$/), { WARM_VERSIONS: 'face-detection-blazeface' });
    expect(loads.some((u) => u.endsWith('/src/main/worker-root.ts'))).toBe(true);
    const bad = FORBIDDEN.filter(([what]) => what !== 'inference threads').flatMap(([what, re]) => loads.filter((u) => re.test(u)).map((u) => `${what}: ${u}`));
    expect(bad).toEqual([]);
  }, 60_000);

  it('the same check sees inference code where it is loaded (the runners table, as an inference thread loads it)', async () => {
    const loads = await loadsOf('test/helpers/load-pipelines.ts', async (_port, record) => seen(record, /onnxruntime-node/) && seen(record, /\/src\/pipelines\/index\.ts$/));
    const hits = FORBIDDEN.filter(([, re]) => loads.some((u) => re.test(u))).map(([what]) => what);
    expect(hits).toEqual(expect.arrayContaining(['onnxruntime', 'pipeline code', 'pipeline steps', 'model sessions']));
  }, 60_000);
});
