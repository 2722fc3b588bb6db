// A front that is not this project: submits a task by the queue contract alone
// (docs/queue-contract.md). It imports ioredis, bullmq and node built-ins only, and reads the shipped
// contract files (contract/) from disk; test/unit/queue-contract.test.ts checks those imports.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';

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

const fill = (template: string, v: Record<string, string | number>) => template.replace(/\{(\w+)\}/g, (_, name) => String(v[name]));

export interface ContractTask {
  redisUrl: string;
  prefix: string;
  userId: number;
  version: string;
  pipeline: string;
  cost: number;
  input: Record<string, unknown>;
  webhookUrl?: string;
}

/** Creates and charges the task (one script), enqueues its job, clears the outbox entry. */
export async function submitByContract(t: ContractTask): Promise<{ taskId: string; result: [number, number] }> {
  const redis = new Redis(t.redisUrl, { maxRetriesPerRequest: 0 });
  try {
    const taskId = randomUUID().replace(/-/g, '');
    const vars = { prefix: t.prefix, task_id: taskId, user_id: t.userId };
    const keys = contract.create_script.keys.map((name: string) => fill(contract.keys[name], vars));
    const d = contract.create_script.defaults;
    const fields = ['task_id', taskId, 'user_id', t.userId, 'version', t.version, 'pipeline', t.pipeline, 'input', JSON.stringify(t.input), 'webhook_url', t.webhookUrl ?? '', 'retention_ms', d.retention_ms];
    const result = (await redis.eval(createScript, keys.length, ...keys, taskId, t.cost, d.record_ttl_ms, d.ledger_reason, fields.length / 2, 0, ...fields)) as [number, number];
    if (result[0] < 0) return { taskId, result };

    const data = { taskId, userId: t.userId };
    checkAgainst(jobDataSchema, data);
    const queue = new Queue(contract.queue.name, { connection: redis, prefix: t.prefix });
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
