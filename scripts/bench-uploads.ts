// npm run bench -- uploads: the API process's memory under many large create-job uploads.
//
// Starts the real API entry (src/main/api.ts) as a child process over a private Redis, then sends
// BENCH_UPLOADS (30) concurrent hairstyle create-jobs of 4 files of BENCH_UPLOAD_MB (9.5) MB each,
// twice: from a user with 4 credits (every one refused for credits) and from a user with enough
// credits. The child's RSS (VmRSS from /proc) is sampled every 20 ms: before, the peak during the
// load, and 5 s after it. BENCH_API_ROOT runs another checkout's API (e.g. an older commit, to
// compare): its node_modules and models/cache must be there.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import sharp from 'sharp';
import { parseConfig } from '../src/config/env.ts';
import { silentLogger } from '../src/domain/logger.ts';
import { freePort, startEmbeddedRedis } from '../src/main/embedded-redis.ts';
import { createServices } from '../src/main/services.ts';
import { deleteKeysWithPrefix } from '../src/store/redis.ts';

const N = Number(process.env.BENCH_UPLOADS ?? 30);
const FILE_BYTES = Math.round(Number(process.env.BENCH_UPLOAD_MB ?? 9.5) * 1024 * 1024);
const root = path.resolve(process.env.BENCH_API_ROOT ?? '.');
const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-bench-uploads-'));
const embedded = process.env.REDIS_URL ? undefined : await startEmbeddedRedis(path.join(dataDir, 'redis'), { persist: false });
const redisUrl = process.env.REDIS_URL ?? embedded!.url;
const prefix = `bench${randomBytes(4).toString('hex')}`;
const port = await freePort();
const env = { REDIS_URL: redisUrl, REDIS_PREFIX: prefix, DATA_DIR: path.join(dataDir, 'api'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', READY_REQUIRES_WORKER: 'false' };
const services = createServices(parseConfig({ ...env, MODELS_DIR: path.join(root, 'models') }), redisUrl, silentLogger);

const base = `http://127.0.0.1:${port}`;
type Child = ReturnType<typeof spawn>;

/** A fresh API process per load, so one load's leftovers do not count against the next. */
async function startApi(): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/api.ts'], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] });
  for (let i = 0; ; i++) {
    if (i > 300) throw new Error('the API did not start');
    const ok = await fetch(`${base}/health/live`).then((r) => r.ok, () => false);
    if (ok) return child;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopApi(child: Child): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

function rss(child: Child): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

// A valid JPEG header and pixels, padded with random bytes to the size (decoders stop at EOI, and
// the API reads only the header): the files pass every check, so a user with credits is accepted.
const photo = await sharp({ create: { width: 512, height: 512, channels: 3, background: '#a0785a' } }).jpeg().toBuffer();
const file = Buffer.concat([photo, randomBytes(FILE_BYTES - photo.length)]);
const blob = new Blob([new Uint8Array(file)], { type: 'image/jpeg' });

async function createJob(token: string): Promise<string> {
  const form = new FormData();
  for (let i = 1; i <= 4; i++) form.append('image_files', blob, `p${i}.jpg`);
  form.append('hair_color', 'red');
  form.append('num_outputs', '1');
  try {
    const res = await fetch(`${base}/api/service/v1/ai-hairstyle/create-job`, { method: 'POST', headers: { authorization: token }, body: form });
    const body = (await res.json()) as { code: number };
    return `${res.status}/${body.code}`;
  } catch (e) {
    return `error: ${(e as Error).message}`;
  }
}

let child: Child | undefined;
try {
  console.log(`API at ${root}; ${N} concurrent create-jobs of 4 x ${(FILE_BYTES / 1024 / 1024).toFixed(1)} MB`);
  console.log('| user | answers | wall | RSS before | peak | 5 s after |');
  console.log('|---|---|---|---|---|---|');
  for (const [who, credits] of [['4 credits', 4], ['enough credits', 6 * N]] as const) {
    child = await startApi();
    // One small request first, so the baseline includes the routes' first-use allocations.
    const warm = await services.accounts.createKey();
    await services.accounts.addCredits(warm.userId, 6, 'bench');
    await createJob(warm.apiKey);
    await new Promise((r) => setTimeout(r, 1000));

    const u = await services.accounts.createKey();
    await services.accounts.addCredits(u.userId, credits, 'bench');
    const c = child;
    const before = rss(c);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(c))), 20);
    const t0 = performance.now();
    const answers = await Promise.all(Array.from({ length: N }, () => createJob(u.apiKey)));
    const wall = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 5000));
    clearInterval(sampler);
    const counts = new Map<string, number>();
    for (const a of answers) counts.set(a, (counts.get(a) ?? 0) + 1);
    const summary = [...counts].map(([a, n]) => `${n} x ${a}`).join(', ');
    console.log(`| ${who} | ${summary} | ${(wall / 1000).toFixed(1)} s | ${mb(before)} | ${mb(peak)} | ${mb(rss(c))} |`);
    await stopApi(c);
  }
} finally {
  if (child) await stopApi(child);
  await deleteKeysWithPrefix(services.redis, `{${prefix}}`);
  await services.close();
  await embedded?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
