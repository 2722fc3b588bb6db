// npm run keys -- create [--user N] [--credits N]     new API key (new user unless --user), prints JSON
// npm run keys -- credits --user N [--add M]           add credits (negative to remove), prints the balance
// npm run keys -- webhook-secret --user N              the user's webhook signing secret (created if needed)
// npm run keys -- migrate-hash-tag                     renames REDIS_PREFIX:* keys to {REDIS_PREFIX}:* (the
//                                                      key form since Redis Cluster support), every process stopped
// Uses REDIS_URL, or the embedded Redis of `npm start` when that is running from the same DATA_DIR.
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/env.ts';
import { Accounts } from '../src/store/accounts.ts';
import { connectRedis, keyspace, migrateToHashTag } from '../src/store/redis.ts';
import { resolveCliRedis } from './cli-redis.ts';

const [cmd, ...rest] = process.argv.slice(2);
const { values } = parseArgs({
  args: rest,
  options: { user: { type: 'string' }, credits: { type: 'string' }, add: { type: 'string' } },
});
const int = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^-?\d+$/.test(v)) {
    console.error(`--${name} must be an integer (got "${v}")`);
    process.exit(2);
  }
  return Number(v);
};

const user = int('user', values.user);
const creditsArg = int('credits', values.credits);
const add = int('add', values.add) ?? 0;
if (cmd !== 'create' && cmd !== 'credits' && cmd !== 'webhook-secret' && cmd !== 'migrate-hash-tag') {
  console.error('usage: npm run keys -- create [--user N] [--credits N] | credits --user N [--add M] | webhook-secret --user N | migrate-hash-tag');
  process.exit(2);
}
if (cmd !== 'create' && cmd !== 'migrate-hash-tag' && user === undefined) {
  console.error(`${cmd} needs --user N`);
  process.exit(2);
}

const config = loadConfig();
const target = await resolveCliRedis(config);
const redis = connectRedis(target.url, { name: 'keys-cli' });
const accounts = new Accounts(redis, keyspace(config.redisKeyPrefix));
try {
  if (cmd === 'create') {
    const credits = creditsArg ?? (user === undefined ? config.defaultCredits : 0);
    const { apiKey, userId } = await accounts.createKey(user);
    if (credits !== 0) await accounts.addCredits(userId, credits, 'grant:keys-cli');
    console.log(JSON.stringify({ api_key: apiKey, user_id: userId, credits: await accounts.balance(userId) }));
  } else if (cmd === 'migrate-hash-tag') {
    const r = await migrateToHashTag(redis, config.redisPrefix, config.redisKeyPrefix);
    console.log(JSON.stringify({ from: `${config.redisPrefix}:*`, to: `${config.redisKeyPrefix}:*`, ...r }));
  } else if (cmd === 'webhook-secret') {
    console.log(JSON.stringify({ user_id: user, webhook_secret: await accounts.webhookSecret(user!) }));
  } else {
    const balance = add !== 0 ? await accounts.addCredits(user!, add, 'grant:keys-cli') : await accounts.balance(user!);
    console.log(JSON.stringify({ user_id: user, credits: balance }));
  }
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  redis.disconnect();
  await target.release();
}
