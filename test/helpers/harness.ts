// A real service for end-to-end tests: the API listening on a loopback port, an optional worker
// (with its inference threads) in this process, a fresh Redis key prefix and data folder per
// harness, and a fixture HTTP server for inputs. Everything is torn down and its keys deleted.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { parseConfig, type Config } from '../../src/config/env.ts';
import { silentLogger } from '../../src/domain/logger.ts';
import { closeApp } from '../../src/api/app.ts';
import { freePort } from '../../src/main/embedded-redis.ts';
import { createServices, type Services } from '../../src/main/services.ts';
import { createApi } from '../../src/main/api-root.ts';
import { createWorker } from '../../src/main/worker-root.ts';
import { deleteKeysWithPrefix } from '../../src/store/redis.ts';

export { freePort };
import type { WorkerParts } from '../../src/main/worker-root.ts';
import { startFixtureServer, type FixtureServer } from './fixture-server.ts';

export const FACE_VERSION = 'ad38697f9baafa7cd5f79808e838acf3a57470368d9a9139f6926d5ab4d14044';

export interface CallResult {
  status: number;
  json: any;
  headers: Headers;
}

export interface Harness {
  config: Config;
  env: Record<string, string>;
  services: Services;
  baseUrl: string;
  fixtures: FixtureServer;
  worker: WorkerParts | undefined;
  startWorker(): Promise<void>;
  user(credits?: number): Promise<{ token: string; userId: number }>;
  call(method: string, p: string, opts?: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<CallResult>;
  createTask(token: string, input: Record<string, unknown>, extra?: Record<string, unknown>): Promise<string>;
  waitForTask(token: string, taskId: string, until?: (t: any) => boolean, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

export async function startHarness(opts: { worker?: boolean; env?: Record<string, string> } = {}): Promise<Harness> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-test-data-'));
  const env: Record<string, string> = {
    REDIS_URL: inject('redisUrl'),
    REDIS_PREFIX: `t${randomBytes(5).toString('hex')}`,
    DATA_DIR: dataDir,
    MODELS_DIR: path.resolve('models'),
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    ORT_INTRA_OP_THREADS: '1',
    // Inputs and webhooks are served by local test servers.
    ALLOW_PRIVATE_URLS: 'true',
    SWEEP_INTERVAL_MS: '100',
    // Load the small model up front; the others load when a test first uses them.
    WARM_VERSIONS: 'face-detection-blazeface',
    ...opts.env,
  };
  const config = parseConfig(env);
  const services = createServices(config, config.redisUrl!, silentLogger);
  const app = await createApi(config, services);
  await app.listen({ port, host: '127.0.0.1' });
  services.startBackground();
  const fixtures = await startFixtureServer();
  const baseUrl = `http://127.0.0.1:${port}`;
  let worker: WorkerParts | undefined;

  const h: Harness = {
    config,
    env,
    services,
    baseUrl,
    fixtures,
    get worker() {
      return worker;
    },
    async startWorker() {
      worker = createWorker(config, services, config.redisUrl!, silentLogger);
      await worker.start();
    },
    async user(credits = 100) {
      const { apiKey, userId } = await services.accounts.createKey();
      if (credits) await services.accounts.addCredits(userId, credits, 'test');
      return { token: apiKey, userId };
    },
    async call(method, p, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      let body: string | undefined = o.raw;
      if (o.body !== undefined) {
        body = JSON.stringify(o.body);
        headers['content-type'] = 'application/json';
      }
      const res = await fetch(p.startsWith('http') ? p : baseUrl + p, { method, headers, body });
      const text = await res.text();
      let json: unknown = text;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON (a file)
      }
      return { status: res.status, json, headers: res.headers };
    },
    async createTask(token, input, extra = {}) {
      const r = await h.call('POST', '/api/tasks/v1/create', { token, body: { version: FACE_VERSION, input, ...extra } });
      if (r.status !== 200) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.json)}`);
      return r.json.result.task_id as string;
    },
    async waitForTask(token, taskId, until = (t) => ['succeeded', 'failed', 'canceled'].includes(t.status), timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const r = await h.call('GET', `/api/tasks/v1/get/${taskId}`, { token });
        if (r.status !== 200) throw new Error(`get failed: ${r.status} ${JSON.stringify(r.json)}`);
        if (until(r.json.result)) return r.json.result;
        if (Date.now() > deadline) throw new Error(`task ${taskId} stuck: ${JSON.stringify(r.json.result)}`);
        await new Promise((res) => setTimeout(res, 25));
      }
    },
    async close() {
      await closeApp(app, 500);
      await worker?.close();
      await fixtures.close();
      // Delete this harness's keys (tasks, users, BullMQ queue) from the shared test Redis.
      await deleteKeysWithPrefix(services.redis, config.redisKeyPrefix);
      await services.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  if (opts.worker !== false) await h.startWorker();
  return h;
}
