// BullMQ producer side, and the names every queue user shares. A task's BullMQ job id is its
// task id, so a duplicate enqueue is a no-op and a queued task can be removed by id on cancel.
import { Queue } from 'bullmq';
import { connectRedis, type RedisClient } from '../store/redis.ts';

export const QueueName = { Tasks: 'tasks', Webhooks: 'webhooks' } as const;
export const JobName = { RunTask: 'run-task' } as const;

export interface TaskJobData {
  taskId: string;
  /** Owner, carried so the worker's status changes need no lookup first. */
  userId: number;
  /** Attempts that ended in INFERENCE_TIMEOUT so far (the second one fails the task). */
  inferenceTimeouts?: number;
}

export interface QueueSettings {
  redisUrl: string;
  prefix: string;
  attempts: number;
}

export class TaskQueue {
  private readonly connection: RedisClient;
  readonly queue: Queue<TaskJobData>;

  constructor(private readonly settings: QueueSettings) {
    this.connection = connectRedis(settings.redisUrl, { forQueue: true, name: 'task-queue' });
    this.queue = new Queue<TaskJobData>(QueueName.Tasks, { connection: this.connection, prefix: settings.prefix });
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

  async counts(): Promise<Record<string, number>> {
    return this.queue.getJobCounts('wait', 'active', 'delayed', 'failed', 'completed');
  }

  async close(): Promise<void> {
    await this.queue.close();
    this.connection.disconnect();
  }
}
