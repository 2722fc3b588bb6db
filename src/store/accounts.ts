// API keys and credits. Keys are random 256-bit tokens stored only as their sha256 (a high-entropy
// token needs no slow hash); the plain key is shown once, at creation. Every credit movement is
// appended to the user's ledger (newest first, last 10,000 kept).
import { hash, randomBytes } from 'node:crypto';
import { newWebhookSecret } from '../domain/webhooks.ts';
import type { Keyspace, RedisClient } from './redis.ts';

export interface LedgerEntry {
  ts: number;
  delta: number;
  balance: number;
  reason: string;
  ref: string;
}

export function hashApiKey(apiKey: string): string {
  // One-shot crypto.hash: every authenticated request hashes its key, and a Hash object per call
  // showed in the create path's profile (bench core).
  return hash('sha256', apiKey, 'hex');
}

/** Entries of the key -> user cache; past this, the oldest are dropped (a Map keeps insertion order). */
const AUTH_CACHE_MAX = 10_000;

export class Accounts {
  /** Key hash -> user and when that answer expires (only found keys are kept). */
  private readonly resolved = new Map<string, { userId: number; untilMs: number }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
    /**
     * How long a found key's user is remembered (AUTH_CACHE_MS): every authenticated request
     * otherwise pays a Redis round trip before its real work. 0 = not remembered.
     */
    private readonly cacheMs = 0,
  ) {}

  /** Creates a key for a user (a new user when userId is omitted). */
  async createKey(userId?: number): Promise<{ apiKey: string; userId: number }> {
    const uid = userId ?? (await this.redis.incr(this.keys.userSeq()));
    if (userId !== undefined) {
      // Keep the sequence ahead of explicitly chosen ids so a later new user never collides.
      await this.redis.eval(
        "if tonumber(redis.call('GET', KEYS[1]) or '0') < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end",
        1,
        this.keys.userSeq(),
        uid,
      );
    }
    const apiKey = `iwk_${randomBytes(32).toString('base64url')}`;
    await this.redis.set(this.keys.apiKey(hashApiKey(apiKey)), String(uid));
    return { apiKey, userId: uid };
  }

  /** The user owning a key, or null. */
  async resolve(apiKey: string): Promise<number | null> {
    const hash = hashApiKey(apiKey);
    const now = this.cacheMs > 0 ? Date.now() : 0;
    const hit = this.resolved.get(hash);
    if (hit && hit.untilMs > now) return hit.userId;
    const v = await this.redis.get(this.keys.apiKey(hash));
    if (v === null) {
      this.resolved.delete(hash);
      return null;
    }
    const userId = Number(v);
    if (this.cacheMs > 0) {
      this.resolved.delete(hash);
      if (this.resolved.size >= AUTH_CACHE_MAX) this.resolved.delete(this.resolved.keys().next().value!);
      this.resolved.set(hash, { userId, untilMs: now + this.cacheMs });
    }
    return userId;
  }

  /** The user's webhook signing secret, created on first use (concurrent first uses agree). */
  async webhookSecret(userId: number): Promise<string> {
    const key = this.keys.webhookSecret(userId);
    await this.redis.set(key, newWebhookSecret(), 'NX');
    return (await this.redis.get(key))!;
  }

  async balance(userId: number): Promise<number> {
    return Number((await this.redis.get(this.keys.credits(userId))) ?? 0);
  }

  /** Adds (or with a negative amount, removes) credits, recording the movement. */
  async addCredits(userId: number, amount: number, reason: string): Promise<number> {
    const balance = await this.redis.eval(
      `local b = redis.call('INCRBY', KEYS[1], ARGV[1])
       redis.call('LPUSH', KEYS[2], cjson.encode({ts = tonumber(ARGV[3]), delta = tonumber(ARGV[1]), balance = b, reason = ARGV[2], ref = ''}))
       redis.call('LTRIM', KEYS[2], 0, 9999)
       return b`,
      2,
      this.keys.credits(userId),
      this.keys.ledger(userId),
      amount,
      reason,
      Date.now(),
    );
    return Number(balance);
  }

  async ledger(userId: number, limit = 100): Promise<LedgerEntry[]> {
    const rows = await this.redis.lrange(this.keys.ledger(userId), 0, limit - 1);
    return rows.map((r) => JSON.parse(r) as LedgerEntry);
  }
}
