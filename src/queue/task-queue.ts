// BullMQ producer side, and the names every queue user shares. A task's BullMQ job id is its
// task id, so a duplicate enqueue is a no-op and a queued task can be removed by id on cancel.
import { Queue } from 'bullmq';
import type { Logger } from '../domain/logger.ts';
import { connectRedis, isRedisUnavailable, type RedisClient } from '../store/redis.ts';

export const QueueName = { Tasks: 'tasks', Webhooks: 'webhooks' } as const;
export const JobName = { RunTask: 'run-task' } as const;

export interface TaskJobData {
  taskId: string;
  /** Owner, carried so the worker's status changes need no lookup first. */
  userId: number;
  /** Attempts that ended in INFERENCE_TIMEOUT so far (the second one fails the task). */
  inferenceTimeouts?: number;
}

export type JobFate = { fate: 'live' } | { fate: 'failed'; reason: string } | { fate: 'gone' };

export interface QueueSettings {
  redisUrl: string;
  prefix: string;
  attempts: number;
  /** Connection state changes and queue errors. */
  log?: Logger;
  /** ioredis auto-pipelining on the producer connection (REDIS_AUTO_PIPELINE). */
  autoPipeline?: boolean;
}

/**
 * BullMQ re-emits every error of its connections on the Queue or Worker, once per reconnect
 * attempt while Redis is down (and an `error` event with no listener is printed with its stack).
 * The connection itself logs losing and regaining Redis (store/redis.ts); this logs the rest.
 */
export function onQueueError(emitter: { on(event: 'error', listener: (e: Error) => void): unknown }, log: Logger | undefined, what: string): void {
  emitter.on('error', (e: Error) => {
    if (!isRedisUnavailable(e)) log?.error({ err: e.message }, `${what} error`);
  });
}

export class TaskQueue {
  private readonly connection: RedisClient;
  readonly queue: Queue<TaskJobData>;

  constructor(private readonly settings: QueueSettings) {
    // A producer connection (no blocking commands): an enqueue fails at once while Redis is down
    // and the enqueue outbox queues the task later, instead of holding the create request open.
    this.connection = connectRedis(settings.redisUrl, { name: 'task-queue', log: settings.log, autoPipeline: settings.autoPipeline });
    this.queue = new Queue<TaskJobData>(QueueName.Tasks, { connection: this.connection, prefix: settings.prefix });
    onQueueError(this.queue, settings.log, 'task queue');
  }

  /**
   * Whether the producer connection is up. After an outage it reconnects on its own schedule,
   * apart from the store's connection: until it does, a create's enqueue fails and the outbox
   * sweep queues the task later (readiness waits for it).
   */
  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  async enqueue(taskId: string, userId: number): Promise<void> {
    await this.queue.add(
      JobName.RunTask,
      { taskId, userId },
      {
        jobId: taskId,
        attempts: this.settings.attempts,
        backoff: { type: 'exponential', delay: 1_000 },
        // The task record is the source of truth; finished jobs need not pile up in Redis.
        removeOnComplete: true,
        removeOnFail: { age: 24 * 3600, count: 10_000 },
      },
    );
  }

  /**
   * Removes a job that is still waiting or delayed: true then, and also when there is no such job
   * (BullMQ's removeJob answers 1 for both); false when it is running (locked). A Redis error
   * rejects: it says nothing about the job's state.
   */
  async removeIfQueued(taskId: string): Promise<boolean> {
    return (await this.queue.remove(taskId)) === 1;
  }

  /**
   * What became of each task's job: `live` (waiting, delayed, active or stalled: a worker will
   * run or re-run it), `failed` (BullMQ failed it for good; its reason) or `gone` (no such job:
   * completed and removed, removed, or its failed entry aged out). Two O(1) reads per job, not
   * getJobState (which scans the wait list).
   */
  async jobFates(taskIds: string[]): Promise<JobFate[]> {
    if (taskIds.length === 0) return [];
    const pipe = this.connection.pipeline();
    for (const id of taskIds) pipe.hmget(this.queue.toKey(id), 'timestamp', 'failedReason').zscore(this.queue.toKey('failed'), id);
    const res = (await pipe.exec()) ?? [];
    const failure = res.find(([err]) => err)?.[0];
    if (failure) throw failure;
    return taskIds.map((_, i) => {
      const [timestamp, reason] = res[2 * i]![1] as [string | null, string | null];
      const failedScore = res[2 * i + 1]![1] as string | null;
      if (timestamp === null) return { fate: 'gone' };
      if (failedScore !== null) return { fate: 'failed', reason: reason ?? '' };
      return { fate: 'live' };
    });
  }

  async counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed');
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
