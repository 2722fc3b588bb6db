// npm run enqueue -- --version V --input '{"image":"https://..."}' --user N [--webhook-url URL]
// Submits a task the way the queue contract says (docs/queue-contract.md), without the HTTP API:
// validates the input with the version's pipeline schema, creates and charges the record with the
// create script, adds the `run-task` job and clears the outbox entry. V is a version id or name.
// Prints {"task_id","task_cost","balance"}. Uses REDIS_URL, or the embedded Redis of `npm start`.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { describeIssues } from '../src/api/routes/tasks.ts';
import { loadConfig } from '../src/config/env.ts';
import type { VersionId } from '../src/domain/version-id.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { PIPELINE_SPECS } from '../src/pipelines/specs.ts';
import { TaskQueue } from '../src/queue/task-queue.ts';
import { connectRedis, keyspace } from '../src/store/redis.ts';
import { Schedule } from '../src/store/schedules.ts';
import { TaskStore } from '../src/store/task-store.ts';
import { resolveCliRedis } from './cli-redis.ts';

const usage = "usage: npm run enqueue -- --version V --input '{...}' --user N [--webhook-url URL]";
const fail = (msg: string, code = 2): never => {
  console.error(msg);
  process.exit(code);
};
const { values } = parseArgs({
  options: { version: { type: 'string' }, input: { type: 'string' }, user: { type: 'string' }, 'webhook-url': { type: 'string' } },
});
if (!values.version || !values.input || !values.user) fail(usage);
if (!/^\d+$/.test(values.user!)) fail(`--user must be a positive integer (got "${values.user}")`);
const hook = values['webhook-url'];
if (hook !== undefined && !/^https?:\/\/[^\s]+$/.test(hook)) fail(`--webhook-url must be an http(s) URL (got "${hook}")`);
let rawInput: unknown;
try {
  rawInput = JSON.parse(values.input!);
} catch (e) {
  fail(`--input is not JSON: ${(e as Error).message}`);
}

const config = loadConfig();
const registry = loadRegistry(config.modelsDir);
const version = registry.get(values.version as VersionId) ?? registry.byName(values.version!);
if (!version) fail(`unknown version "${values.version}" (known: ${[...registry.versions.values()].map((v) => v.manifest.name).join(', ')})`);
const spec = PIPELINE_SPECS[version!.manifest.pipeline] ?? fail(`version ${values.version} has no runnable pipeline`);
const parsed = spec.input.safeParse(rawInput);
if (!parsed.success) fail(`invalid input: ${describeIssues(parsed.error.issues, 'input')}`);

const target = await resolveCliRedis(config);
const redis = connectRedis(target.url, { name: 'enqueue-cli' });
const keys = keyspace(config.redisKeyPrefix);
const tasks = new TaskStore(redis, keys, { retentionMs: config.retention.taskMs, recordTtlMs: config.retention.recordTtlMs });
const queue = new TaskQueue({ redisUrl: target.url, prefix: config.redisKeyPrefix, attempts: config.jobAttempts });
try {
  const userId = Number(values.user);
  const taskId = randomUUID().replace(/-/g, '');
  const cost = version!.manifest.cost;
  const created = await tasks.create({
    taskId,
    userId,
    version: version!.id,
    pipeline: version!.manifest.pipeline,
    input: parsed.data!,
    webhookUrl: hook ?? null,
    cost,
  });
  // No Idempotency-Key here, so this is always a new task.
  const balance = created.created ? created.balance : undefined;
  await queue.enqueue(taskId, userId);
  await new Schedule(redis, keys.enqueueOutbox()).done(taskId);
  console.log(JSON.stringify({ task_id: taskId, task_cost: cost, balance }));
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
} finally {
  await queue.close();
  redis.disconnect();
  await target.release();
}
