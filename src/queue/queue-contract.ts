// The queue contract (docs/queue-contract.md): what an API front that is not this project's HTTP
// API writes to submit a task. Its version is bumped with any change a front would have to follow
// (record fields, create-script KEYS/ARGV, queue or job names, job data); the shipped files under
// contract/ are generated from this module by `npm run contract` and checked by a test.
import { z } from 'zod';
import { JobName, QueueName, type TaskJobData } from './task-queue.ts';

/**
 * Version of the queue contract; docs/queue-contract.md says "contract version N".
 * 2: keys and the BullMQ prefix start with the prefix as a hash tag, `{iw}:` (Redis Cluster).
 * 3: the create script takes two more KEYS (idempotency record, deadline schedule) and three more
 *    ARGV before the task pairs (idempotency fingerprint and lifetime, cancel-after ms).
 * 4: the idempotency record is a string ("fingerprint|cost|task_id|job_id|created_ms") instead of
 *    a hash, and a fingerprint may not contain "|". (Records version 3 wrote are still read.)
 *    Within 4, a record lifetime of 0 (ARGV[8]) says the task id was derived from the key: the task
 *    record is the key's record (what the HTTP API's create-task does); other values are unchanged.
 */
export const QUEUE_CONTRACT_VERSION = 4;

/** The data of a `run-task` job, as a front writes it. */
export const TaskJobDataSchema = z.strictObject({
  /** The task id: 32 lowercase hex characters, also the BullMQ job id. */
  taskId: z.string().regex(/^[0-9a-f]{32}$/),
  /** The task's owner (the record's user_id). */
  userId: z.number().int().positive(),
  /** Internal: attempts that ended in INFERENCE_TIMEOUT so far. A front leaves it out. */
  inferenceTimeouts: z.number().int().min(0).optional(),
});
// The schema and the worker's type must describe the same data.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameJobData: Same<z.infer<typeof TaskJobDataSchema>, TaskJobData> = true;
void sameJobData;

/** BullMQ job options the project's producer uses (attempts: JOB_ATTEMPTS, default 3). */
export const taskJobOptions = (taskId: string, attempts: number) => ({
  jobId: taskId,
  attempts,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: true,
  removeOnFail: { age: 24 * 3600, count: 10_000 },
});

export const CONTRACT_QUEUE = { queue: QueueName.Tasks, jobName: JobName.RunTask } as const;
