// Shared set-up of the benchmarks: a Redis (REDIS_URL, or a private one), a fresh key prefix and
// data folder, the services over them, the graphs fetched; and a teardown that removes it all.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseConfig, type Config } from '../src/config/env.ts';
import { silentLogger } from '../src/domain/logger.ts';
import { startEmbeddedRedis } from '../src/main/embedded-redis.ts';
import { createServices, type Services } from '../src/main/services.ts';
import { fetchAll } from '../src/tooling/fetch-graphs.ts';
import { deleteKeysWithPrefix } from '../src/store/redis.ts';
import type { ExecutionProvider } from '../src/models/onnx.ts';

/**
 * The provider and intra-op threads of the in-process pipeline benches (hairstyle, tryon):
 * `BENCH_PROVIDER` (cpu, the default; cuda or webgpu on a GPU host) and `BENCH_THREADS` (default:
 * the cores less one, as a worker with one task thread gets). A provider that cannot start is an
 * error, not a silent cpu run: a figure labelled cuda must be a cuda figure.
 */
export function benchSessionOptions(): { provider: ExecutionProvider; intraOpThreads: number; allowSpinning: false; warn: (m: string) => never } {
  const provider = (process.env.BENCH_PROVIDER ?? 'cpu') as ExecutionProvider;
  if (!['cpu', 'cuda', 'webgpu'].includes(provider)) throw new Error(`BENCH_PROVIDER must be cpu, cuda or webgpu, not ${provider}`);
  const intraOpThreads = Number(process.env.BENCH_THREADS ?? Math.max(1, os.availableParallelism() - 1));
  if (!Number.isInteger(intraOpThreads) || intraOpThreads < 1) throw new Error(`BENCH_THREADS must be a positive integer, not ${process.env.BENCH_THREADS}`);
  return {
    provider,
    intraOpThreads,
    allowSpinning: false,
    warn: (m: string) => {
      throw new Error(`bench: ${m}`);
    },
  };
}

export const stats = {
  median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    const m = Math.floor(s.length / 2);
    return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
  },
  pct(xs: number[], p: number): number {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
  },
  fmt: (ms: number) => `${ms.toFixed(2)} ms`,
};

/**
 * Runs `run` `n` times as a warm-up and returns each run's time (ms): the first loads the sessions,
 * the next ones compile the code the case takes for the first time. A worker runs thousands of
 * tasks: the benches' medians are its steady state, the warm-up's times are printed beside them
 * (the first is a task's latency right after a worker starts).
 */
export async function warmUp(n: number, run: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return times;
}

/**
 * Runs `tasks` calls of `run` with `inFlight` of them at a time (each lane starts the next as its
 * last ends): their latencies and the wall time of the whole, in seconds.
 */
export async function runInFlight(tasks: number, inFlight: number, run: () => Promise<unknown>): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < tasks) {
        const t = performance.now();
        await run();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - t0) / 1000 };
}

/** `env`: what the config was parsed from (a benchmark builds variants of it). */
export async function benchSetup(env: Record<string, string>): Promise<{ config: Config; services: Services; env: Record<string, string | undefined>; teardown(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-bench-'));
  const embedded = process.env.REDIS_URL ? undefined : await startEmbeddedRedis(path.join(dataDir, 'redis'), { persist: false });
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const parsedFrom = {
    ...process.env,
    REDIS_URL: process.env.REDIS_URL ?? embedded!.url,
    REDIS_PREFIX: prefix,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'silent',
    // Benchmarks serve their inputs and receive their webhooks over loopback.
    ALLOW_PRIVATE_URLS: 'true',
    ...env,
  };
  const config = parseConfig(parsedFrom);
  const services = createServices(config, config.redisUrl!, silentLogger);
  await fetchAll(services.registry);
  return {
    config,
    services,
    env: parsedFrom,
    async teardown() {
      await deleteKeysWithPrefix(services.redis, config.redisKeyPrefix);
      await services.close();
      await embedded?.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The picture benches' 1 MP development photos (hairstyle, tryon, pictures, parity), one definition
 * so each bench times and compares the same pixels: s6-centre-left x1.25 (1029x1029, one face) and
 * s6-red-dress at 732 px wide (732x1366, JPEG q92), both from face-api's sample6.
 */
export async function benchPhotos(): Promise<{ hair: Buffer; tryon: Buffer }> {
  const [{ hairPhoto }, { tryonPhoto }, { default: sharp }] = await Promise.all([import('./lib/dev-photos.ts'), import('../test/helpers/tryon-dev-set.ts'), import('sharp')]);
  const hair = (await hairPhoto('s6-centre-left', { scale: 1.25 })).bytes;
  const tryon = await sharp(await tryonPhoto('s6-red-dress')).resize(732).jpeg({ quality: 92 }).toBuffer();
  return { hair, tryon };
}
