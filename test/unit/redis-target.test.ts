// How REDIS_URL names a Redis Cluster, and the key prefix every deployment uses (a hash tag).
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/env.ts';
import { keyspace, parseClusterUrl } from '../../src/store/redis.ts';

describe('REDIS_URL for a cluster', () => {
  it('reads the seed nodes, credentials and TLS of a redis+cluster URL', () => {
    expect(parseClusterUrl('redis+cluster://10.0.0.5:6379,10.0.0.6:7000')).toEqual({
      nodes: [{ host: '10.0.0.5', port: 6379 }, { host: '10.0.0.6', port: 7000 }],
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(parseClusterUrl('rediss+cluster://app:s%40cret@[::1]:6380/')).toEqual({ nodes: [{ host: '::1', port: 6380 }], username: 'app', password: 's@cret', tls: true });
    // Anything else is one server, for ioredis to parse.
    expect(parseClusterUrl('redis://127.0.0.1:6379/2')).toBeUndefined();
  });

  it('start-up refuses a malformed cluster URL, naming REDIS_URL', () => {
    expect(() => parseConfig({ REDIS_URL: 'redis+cluster://10.0.0.5' })).toThrow(ConfigError);
    expect(() => parseConfig({ REDIS_URL: 'redis+cluster://a:1,b' })).toThrow(/REDIS_URL: a cluster URL is/);
    expect(parseConfig({ REDIS_URL: 'redis+cluster://a:1,b:2' }).redisCluster).toBe(true);
    expect(parseConfig({ REDIS_URL: 'redis://a:1' }).redisCluster).toBe(false);
  });

  it('every key and queue starts with the prefix as a hash tag, on one server as on a cluster', () => {
    for (const url of ['redis://a:1', 'redis+cluster://a:1']) {
      const c = parseConfig({ REDIS_URL: url, REDIS_PREFIX: 'prod' });
      expect(c.redisKeyPrefix).toBe('{prod}');
      const k = keyspace(c.redisKeyPrefix);
      for (const key of [k.task('t'), k.credits(1), k.userTasks(1), k.ledger(1), k.apiKey('h'), k.enqueueOutbox(), k.activeTasks(), k.retention(), k.job('j')]) {
        expect(key.startsWith('{prod}:'), key).toBe(true);
      }
    }
    expect(() => parseConfig({ REDIS_PREFIX: '{prod}' })).toThrow(/REDIS_PREFIX/);
  });
});
