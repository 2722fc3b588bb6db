// Due-time schedules shared by many processes (retention sweeps, the webhook outbox): a zset of
// member -> due ms. claimDue leases the due members (pushes their score out by the lease), so
// two processes never work on the same member at once, and a member whose worker died comes back
// when its lease ends: nothing is missed, nothing done twice while its holder lives.
import type { RedisClient } from './redis.ts';

const CLAIM = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], m) end
return due`;

export class Schedule {
  constructor(
    private readonly redis: RedisClient,
    readonly key: string,
  ) {}

  /** Members due by `nowMs`, leased for `leaseMs`. */
  async claimDue(nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    return (await this.redis.eval(CLAIM, 1, this.key, nowMs, nowMs + leaseMs, limit)) as string[];
  }

  /**
   * The one claim loop of every schedule: claims due members in batches of `batch`, hands each to
   * `handle`, then marks it done; resolves to how many `handle` counted. A member whose `handle`
   * throws stays leased (the pass stops) and comes back when its lease ends.
   */
  async drainDue(nowMs: number, leaseMs: number, batch: number, handle: (member: string) => Promise<boolean>): Promise<number> {
    let counted = 0;
    for (;;) {
      const due = await this.claimDue(nowMs, leaseMs, batch);
      for (const member of due) {
        if (await handle(member)) counted++;
        await this.done(member);
      }
      if (due.length < batch) return counted;
    }
  }

  async done(member: string): Promise<void> {
    await this.redis.zrem(this.key, member);
  }

  /** Removes several members in one command (a no-op for none). */
  async doneMany(members: string[]): Promise<void> {
    if (members.length > 0) await this.redis.zrem(this.key, ...members);
  }

  async has(member: string): Promise<boolean> {
    return (await this.redis.zscore(this.key, member)) !== null;
  }

  async size(): Promise<number> {
    return this.redis.zcard(this.key);
  }
}
