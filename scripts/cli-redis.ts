// Which Redis a CLI tool talks to: REDIS_URL; else the embedded Redis of a running `npm start`;
// else a short-lived embedded Redis on the same data folder (so keys made before the first start persist).
import path from 'node:path';
import type { Config } from '../src/config/env.ts';
import { findRunningEmbeddedRedis, startEmbeddedRedis } from '../src/main/embedded-redis.ts';

export async function resolveCliRedis(config: Config): Promise<{ url: string; release(): Promise<void> }> {
  const none = async () => {};
  if (config.redisUrl) return { url: config.redisUrl, release: none };
  const dir = path.join(config.dataDir, 'redis');
  const running = await findRunningEmbeddedRedis(dir);
  if (running) return { url: running, release: none };
  const embedded = await startEmbeddedRedis(dir);
  return { url: embedded.url, release: () => embedded.stop() };
}
