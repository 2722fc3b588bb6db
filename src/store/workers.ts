// Worker heartbeats: each worker process refreshes its entry (score = expiry, unix ms) while it is
// alive and its models are loaded; /health/ready counts the live ones.
import type { Keyspace, RedisClient } from './redis.ts';

export class WorkerRegistry {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
  ) {}

  async beat(workerId: string, ttlMs: number): Promise<void> {
    await this.redis.zadd(this.keys.workers(), Date.now() + ttlMs, workerId);
  }

  async remove(workerId: string): Promise<void> {
    await this.redis.zrem(this.keys.workers(), workerId);
  }

  async live(): Promise<number> {
    const now = Date.now();
    await this.redis.zremrangebyscore(this.keys.workers(), '-inf', now);
    return this.redis.zcard(this.keys.workers());
  }

  async ping(): Promise<boolean> {
    return (await this.redis.ping()) === 'PONG';
  }
}
