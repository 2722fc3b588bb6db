// The embedded default: a private redis-server child that answers and stops; a clear message
// when the binary is missing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RedisBinaryMissing, findRunningEmbeddedRedis, startEmbeddedRedis } from '../../src/main/embedded-redis.ts';
import { connectRedis } from '../../src/store/redis.ts';

describe('embedded redis', () => {
  it('starts a private redis-server, is findable while it runs, and stops', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-emb-'));
    const r = await startEmbeddedRedis(dir, { persist: false });
    expect(r.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(await findRunningEmbeddedRedis(dir)).toBe(r.url);
    const c = connectRedis(r.url);
    expect(await c.ping()).toBe('PONG');
    c.disconnect();
    await r.stop();
    expect(await findRunningEmbeddedRedis(dir)).toBeNull();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('without redis-server on PATH, says how to install it or set REDIS_URL', async () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const err = await startEmbeddedRedis(os.tmpdir()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RedisBinaryMissing);
      expect((err as Error).message).toMatch(/apt-get install redis-server.*REDIS_URL=redis:\/\//s);
    } finally {
      process.env.PATH = saved;
    }
  });
});
