// A front that is not this project: submits a task by the queue contract alone
// (docs/queue-contract.md). It imports ioredis, bullmq and node built-ins only, and reads the shipped
// contract files (contract/) from disk; test/unit/queue-contract.test.ts checks those imports.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';

const dir = new URL('../../contract/', import.meta.url);
const read = (rel: string) => fs.readFileSync(new URL(rel, dir), 'utf8');
export const contract = JSON.parse(read('contract.json'));
const createScript = read(contract.create_script.file);
const jobDataSchema = JSON.parse(read(contract.queue.job_data_schema));

/** Required properties present, no others (the job data schema is a flat strict object). */
function checkAgainst(schema: any, value: Record<string, unknown>): void {
  for (const k of schema.required ?? []) if (!(k in value)) throw new Error(`job data: ${k} is required`);
  for (const k of Object.keys(value)) if (!(k in schema.properties)) throw new Error(`job data: ${k} is not allowed`);
}

// `<name>` is a placeholder; the rest of a template, braces included, is literal.
const fill = (template: string, v: Record<string, string | number>) => template.replace(/<(\w+)>/g, (_, name) => String(v[name]));

export interface ContractTask {
  /** A `redis://` URL, or a Redis Cluster's nodes as `redis+cluster://host:port,host:port`. */
  redisUrl: string;
  /** The deployment's REDIS_PREFIX (`iw`); keys start with `{iw}:`. */
  prefix: string;
  userId: number;
  version: string;
  pipeline: string;
  cost: number;
  input: Record<string, unknown>;
  webhookUrl?: string;
}

/** One server, or a cluster from its seed nodes (the two ways the service itself connects). */
function connect(url: string): Redis | Cluster {
  const m = /^redis\+cluster:\/\/(.+)$/.exec(url);
  if (!m) return new Redis(url, { maxRetriesPerRequest: 0 });
  const nodes = m[1]!.split(',').map((hp) => ({ host: hp.slice(0, hp.lastIndexOf(':')), port: Number(hp.slice(hp.lastIndexOf(':') + 1)) }));
  return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 0 } });
}

/** Creates and charges the task (one script), enqueues its job, clears the outbox entry. */
export async function submitByContract(t: ContractTask): Promise<{ taskId: string; result: [number, number] }> {
  const redis = connect(t.redisUrl);
  try {
    const taskId = randomUUID().replace(/-/g, '');
    const d = contract.create_script.defaults;
    const vars = { prefix: t.prefix, task_id: taskId, user_id: t.userId, key_sha256: d.key_sha256 };
    const keys = contract.create_script.keys.map((name: string) => fill(contract.keys[name], vars));
    const fields = ['task_id', taskId, 'user_id', t.userId, 'version', t.version, 'pipeline', t.pipeline, 'input', JSON.stringify(t.input), 'webhook_url', t.webhookUrl ?? '', 'retention_ms', d.retention_ms];
    // No Idempotency-Key and no Cancel-After: their defaults.
    const argv = [taskId, t.cost, d.record_ttl_ms, d.ledger_reason, fields.length / 2, 0, d.idempotency_fingerprint, d.idempotency_ttl_ms, d.cancel_after_ms];
    const result = (await redis.eval(createScript, keys.length, ...keys, ...argv, ...fields)) as [number, number];
    if (result[0] < 0) return { taskId, result };

    const data = { taskId, userId: t.userId };
    checkAgainst(jobDataSchema, data);
    const queue = new Queue(contract.queue.name, { connection: redis, prefix: fill(contract.queue.bullmq_prefix, vars) });
    try {
      const opts = { ...contract.queue.job_options, jobId: taskId };
      await queue.add(contract.queue.job_name, data, opts);
    } finally {
      await queue.close();
    }
    await redis.zrem(fill(contract.keys.enqueue_outbox, vars), taskId);
    return { taskId, result };
  } finally {
    redis.disconnect();
  }
}
