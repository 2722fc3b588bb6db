// The CLIs users and outside tests drive: `npm run keys` and `npm run models -- list`.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { Accounts } from '../../src/store/accounts.ts';
import { parseConfig } from '../../src/config/env.ts';
import { checkKeyLayout } from '../../src/main/services.ts';
import { connectRedis, deleteKeysWithPrefix, keyspace } from '../../src/store/redis.ts';
import { FACE_VERSION } from '../helpers/harness.ts';

const run = promisify(execFile);
const prefix = `t${randomBytes(5).toString('hex')}`;
const keyPrefix = `{${prefix}}`;
const env = { ...process.env, REDIS_URL: inject('redisUrl'), REDIS_PREFIX: prefix };
const cli = (script: string, ...args: string[]) => run(process.execPath, ['--import', 'tsx', script, ...args], { env });
const redis = connectRedis(inject('redisUrl'));
afterAll(async () => {
  await deleteKeysWithPrefix(redis, keyPrefix);
  await deleteKeysWithPrefix(redis, `old${prefix}`);
  await deleteKeysWithPrefix(redis, `{old${prefix}}`);
  redis.disconnect();
});

describe('npm run keys', () => {
  it('create prints a working key with its user and credits', async () => {
    const { stdout } = await cli('scripts/keys.ts', 'create', '--credits', '7');
    const out = JSON.parse(stdout);
    expect(out).toEqual({ api_key: expect.stringMatching(/^iwk_/), user_id: expect.any(Number), credits: 7 });
    expect(await new Accounts(redis, keyspace(keyPrefix)).resolve(out.api_key)).toBe(out.user_id);
  });

  it('create --user N adds a key to that user; credits --add tops up', async () => {
    const a = JSON.parse((await cli('scripts/keys.ts', 'create', '--user', '42', '--credits', '3')).stdout);
    const b = JSON.parse((await cli('scripts/keys.ts', 'create', '--user', '42')).stdout);
    expect([a.user_id, b.user_id, b.credits]).toEqual([42, 42, 3]);
    expect(a.api_key).not.toBe(b.api_key);
    const topped = JSON.parse((await cli('scripts/keys.ts', 'credits', '--user', '42', '--add', '10')).stdout);
    expect(topped).toEqual({ user_id: 42, credits: 13 });
  });

  it('webhook-secret prints the user\'s signing secret, the same each time', async () => {
    const a = JSON.parse((await cli('scripts/keys.ts', 'webhook-secret', '--user', '42')).stdout);
    const b = JSON.parse((await cli('scripts/keys.ts', 'webhook-secret', '--user', '42')).stdout);
    expect(a).toEqual({ user_id: 42, webhook_secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/) });
    expect(b).toEqual(a);
    expect(await new Accounts(redis, keyspace(keyPrefix)).webhookSecret(42)).toBe(a.webhook_secret);
  });

  it('refuses bad arguments with exit code 2 and a message', async () => {
    const err = await cli('scripts/keys.ts', 'create', '--user', 'x').catch((e) => e);
    expect(err.code).toBe(2);
    expect(err.stderr).toMatch(/--user must be an integer/);
  });

  it('migrate-hash-tag moves data from the pre-cluster key form, which start-up refuses until then', async () => {
    // A deployment written before keys became `{name}:*`: a user, its key, a task, a queued job.
    const name = `old${prefix}`;
    const config = parseConfig({ REDIS_URL: inject('redisUrl'), REDIS_PREFIX: name });
    const old = new Accounts(redis, keyspace(name));
    const { apiKey, userId } = await old.createKey();
    await old.addCredits(userId, 5, 'test');
    await redis.hset(`${name}:task:abc`, 'status', 'succeeded');
    await redis.pexpire(`${name}:task:abc`, 600_000);
    await redis.lpush(`${name}:tasks:wait`, 'abc');
    await expect(checkKeyLayout(config, { redis })).rejects.toThrow(/npm run keys -- migrate-hash-tag/);

    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/keys.ts', 'migrate-hash-tag'], { env: { ...env, REDIS_PREFIX: name } });
    expect(JSON.parse(stdout)).toEqual({ from: `${name}:*`, to: `{${name}}:*`, renamed: 6, skipped: 0 });
    const moved = new Accounts(redis, keyspace(`{${name}}`));
    expect(await moved.resolve(apiKey)).toBe(userId);
    expect(await moved.balance(userId)).toBe(5);
    expect(await redis.hget(`{${name}}:task:abc`, 'status')).toBe('succeeded');
    expect(await redis.pttl(`{${name}}:task:abc`)).toBeGreaterThan(0);
    expect(await redis.lrange(`{${name}}:tasks:wait`, 0, -1)).toEqual(['abc']);
    expect(await redis.exists(`${name}:users:seq`)).toBe(0);
    await expect(checkKeyLayout(config, { redis })).resolves.toBeUndefined();
  });
});

describe('npm run models -- list', () => {
  it('prints every version as JSON with its id, name, pipeline and license', async () => {
    const rows = JSON.parse((await cli('scripts/models.ts', 'list')).stdout);
    const face = rows.find((r: { name: string }) => r.name === 'face-detection-blazeface');
    expect(face).toMatchObject({ version: FACE_VERSION, pipeline: 'face-detection', license: { code: 'Apache-2.0', weights: 'Apache-2.0' }, fetched: true });
  });
});
