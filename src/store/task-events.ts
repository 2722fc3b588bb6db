// Waiting for a task to end (Prefer: wait on create-task) without polling: one Redis pub/sub
// subscription per process, fanned out in memory to the requests that wait. A waiter marks its task
// (TaskStore.watchEnd) and the terminal-transition script publishes the id of a marked task, so the
// usual task end sends no message at all. A waiter costs two reads: the mark (which also tells a
// task that ended already) and the record once it ended.
//
// The subscription is opened on the first wait, so a process that never waits (a worker) never
// opens it. Ends published while the subscriber's link was down are lost: on reconnecting, each
// task still waited on is read once.
import type { Logger } from '../domain/logger.ts';
import { isTerminal, type TaskRecord } from '../domain/task.ts';
import { connectRedis, type RedisClient } from './redis.ts';
import type { TaskStore } from './task-store.ts';

type Settle = (record: TaskRecord | null) => void;

export interface TaskEndWaiterDeps {
  redisUrl: string;
  /** keyspace.taskEndedChannel(): what transition.lua publishes to. */
  channel: string;
  tasks: Pick<TaskStore, 'get' | 'watchEnd'>;
  log: Logger;
}

export class TaskEndWaiter {
  private subscriber: RedisClient | undefined;
  private subscribed: Promise<void> | undefined;
  private readonly waiting = new Map<string, Set<Settle>>();

  constructor(private readonly deps: TaskEndWaiterDeps) {}

  /** Requests waiting now (for tests and metrics). */
  get size(): number {
    let n = 0;
    for (const s of this.waiting.values()) n += s.size;
    return n;
  }

  private subscribe(): Promise<void> {
    if (this.subscribed) return this.subscribed;
    const sub = connectRedis(this.deps.redisUrl, { name: 'task-events', log: this.deps.log });
    this.subscriber = sub;
    sub.on('message', (channel: string, taskId: string) => {
      if (channel === this.deps.channel && this.waiting.has(taskId)) void this.settleIfEnded(taskId);
    });
    let connectedBefore = false;
    sub.on('ready', () => {
      // ioredis subscribes again by itself after a reconnect; what was published meanwhile is lost.
      if (connectedBefore) for (const taskId of this.waiting.keys()) void this.settleIfEnded(taskId);
      connectedBefore = true;
    });
    const subscribed = sub.subscribe(this.deps.channel).then(() => undefined);
    // A failed subscribe is tried again by the next wait.
    subscribed.catch(() => {
      if (this.subscribed === subscribed) this.subscribed = undefined;
      sub.disconnect();
    });
    this.subscribed = subscribed;
    return subscribed;
  }

  /**
   * The task's record once it has ended, or null when it has not ended within `timeoutMs`, when
   * `signal` aborts (the client went away), or when the record is gone. Rejects only when Redis
   * cannot be reached at the start.
   */
  async wait(taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<TaskRecord | null> {
    await this.subscribe();
    return new Promise<TaskRecord | null>((resolve, reject) => {
      let set = this.waiting.get(taskId);
      if (!set) this.waiting.set(taskId, (set = new Set()));
      const waiters = set;
      const leave = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiters.delete(settle);
        if (waiters.size === 0 && this.waiting.get(taskId) === waiters) this.waiting.delete(taskId);
      };
      const settle: Settle = (record) => {
        leave();
        resolve(record);
      };
      const onAbort = () => settle(null);
      const timer = setTimeout(() => settle(null), timeoutMs);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.add(settle);
      // Registered first, then marked: an end after the mark is published (and heard), one before
      // it is told by the status the mark returns.
      this.deps.tasks.watchEnd(taskId).then(
        (status) => {
          if (status === null || isTerminal(status)) void this.settleIfEnded(taskId);
        },
        (e: unknown) => {
          leave();
          reject(e);
        },
      );
    });
  }

  /** Reads the record once and hands it to every waiter of the task if it has ended (or is gone). */
  private async settleIfEnded(taskId: string): Promise<void> {
    let record: TaskRecord | null;
    try {
      record = await this.deps.tasks.get(taskId);
    } catch (e) {
      // The waiters time out and answer without the record; the task itself is unaffected.
      this.deps.log.warn({ taskId, err: (e as Error).message }, 'could not read an ended task for its waiters');
      return;
    }
    if (record && !isTerminal(record.status)) return;
    for (const settle of [...(this.waiting.get(taskId) ?? [])]) settle(record);
  }

  /** Lets every waiter go (without a record) and closes the subscription. */
  close(): void {
    for (const waiters of [...this.waiting.values()]) for (const settle of [...waiters]) settle(null);
    this.subscriber?.disconnect();
    this.subscriber = undefined;
    this.subscribed = undefined;
  }
}
