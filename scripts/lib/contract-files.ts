// The files of the queue contract (contract/), built from the code: the create script, the job
// data's and each pipeline input's JSON Schema (from their zod schemas), and contract.json (names,
// key templates, job options). `npm run contract` writes them; test/unit/queue-contract.test.ts
// fails when the files on disk drift from what this builds.
import fs from 'node:fs';
import { z } from 'zod';
import { PIPELINE_SPECS } from '../../src/pipelines/specs.ts';
import { CONTRACT_QUEUE, QUEUE_CONTRACT_VERSION, TaskJobDataSchema, taskJobOptions } from '../../src/queue/queue-contract.ts';
import { keyspace } from '../../src/store/redis.ts';
import { IDEMPOTENCY_TTL_MS } from '../../src/domain/idempotency.ts';

export const CONTRACT_DIR = new URL('../../contract/', import.meta.url);
const CREATE_TASK_LUA = new URL('../../src/store/lua/create-task.lua', import.meta.url);

const schema = (s: z.ZodType, id: string) =>
  // Input form: what a front writes (defaults shown as `default`, not required).
  JSON.stringify({ $id: id, ...z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) }, null, 2) + '\n';

/**
 * Path under contract/ -> content. In templates, `<name>` is a placeholder; everything else is
 * literal, the braces of the key prefix `{<prefix>}` included (a Redis Cluster hash tag).
 */
export function contractFiles(): Record<string, string> {
  const keyPrefix = '{<prefix>}';
  const k = keyspace(keyPrefix);
  const uid = '<user_id>' as unknown as number;
  const manifest = {
    contract_version: QUEUE_CONTRACT_VERSION,
    placeholders: '<name> in a template is a placeholder; the rest, braces included, is literal',
    key_prefix: keyPrefix,
    queue: { name: CONTRACT_QUEUE.queue, bullmq_prefix: keyPrefix, job_name: CONTRACT_QUEUE.jobName, job_data_schema: 'task-job-data.schema.json', job_options: taskJobOptions('<task_id>', 3) },
    keys: {
      task: k.task('<task_id>'),
      credits: k.credits(uid),
      user_tasks: k.userTasks(uid),
      ledger: k.ledger(uid),
      enqueue_outbox: k.enqueueOutbox(),
      job: k.job('-'),
      active_tasks: k.activeTasks(),
      // <key_sha256>: sha256 (hex) of the Idempotency-Key; `-` when the task has none.
      idempotency: k.idempotency(uid, '<key_sha256>'),
      deadlines: k.deadlines(),
    },
    create_script: {
      file: 'create-task.lua',
      keys: ['task', 'credits', 'user_tasks', 'ledger', 'enqueue_outbox', 'job', 'active_tasks', 'idempotency', 'deadlines'],
      argv: ['task_id', 'cost', 'record_ttl_ms', 'ledger_reason', 'task_pair_count', 'job_pair_count', 'idempotency_fingerprint', 'idempotency_ttl_ms', 'cancel_after_ms', '...task_pairs'],
      task_fields: ['task_id', 'user_id', 'version', 'pipeline', 'input', 'webhook_url', 'retention_ms'],
      defaults: { record_ttl_ms: 7 * 86_400_000, retention_ms: 3_600_000, ledger_reason: 'task', key_sha256: '-', idempotency_fingerprint: '', idempotency_ttl_ms: IDEMPOTENCY_TTL_MS, cancel_after_ms: 0 },
    },
    pipelines: Object.fromEntries(Object.keys(PIPELINE_SPECS).sort().map((n) => [n, { input_schema: `pipelines/${n}.input.schema.json` }])),
  };
  const files: Record<string, string> = {
    'contract.json': JSON.stringify(manifest, null, 2) + '\n',
    'create-task.lua': fs.readFileSync(CREATE_TASK_LUA, 'utf8'),
    'task-job-data.schema.json': schema(TaskJobDataSchema, 'task-job-data.schema.json'),
  };
  for (const [name, spec] of Object.entries(PIPELINE_SPECS)) files[`pipelines/${name}.input.schema.json`] = schema(spec.input, `pipelines/${name}.input.schema.json`);
  return files;
}
