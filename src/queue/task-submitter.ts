// Submitting a task: one Lua step creates the record, charges it and writes the enqueue outbox;
// then the BullMQ job is added (job id = task id, so a repeat is a no-op) and the outbox entry
// cleared. If the process dies in between, a sweep (every process runs one) finds entries older
// than a grace period and queues them: a charged task is always queued.
//
// Clearing the entry is tidying, not part of the guarantee: the job exists by then, and an entry
// left behind (a failed or lost ZREM) is swept after the grace period, found queued or past
// `starting`, and dropped (the add is a no-op for an existing job id). So the request does not wait
// for it, and the entries of one event-loop turn leave in one ZREM: at 64 creates in flight that
// was a third of the Redis commands of a create (bench core, section 5).
import type { Logger } from '../domain/logger.ts';
import type { Schedule } from '../store/schedules.ts';
import type { CreateResult, NewTask, TaskStore } from '../store/task-store.ts';
import { PeriodicPass } from './periodic-pass.ts';
import type { TaskQueue } from './task-queue.ts';

/** Entries younger than this belong to a submit still in flight. */
export const ENQUEUE_GRACE_MS = 5_000;
const LEASE_MS = 30_000;

export class TaskSubmitter {
  private readonly loop: PeriodicPass;
  /** Task ids queued since the last flush, whose outbox entries are cleared in one ZREM. */
  private clearing: string[] = [];
  private clearFlush: Promise<void> | null = null;

  constructor(private readonly deps: { tasks: TaskStore; queue: TaskQueue; outbox: Schedule; log: Logger }) {
    this.loop = new PeriodicPass('enqueue outbox sweep', (now) => this.pass(now), deps.log);
  }

  /**
   * Creates, charges and queues a task. A failed enqueue is left to the sweep, not to the caller.
   * A repeat of an Idempotency-Key's first request answers that request's task, queued already.
   */
  async submit(t: NewTask): Promise<CreateResult> {
    const created = await this.deps.tasks.create(t);
    if (!created.created) return created;
    await this.push(t.taskId, t.userId).catch((e: Error) =>
      this.deps.log.warn({ taskId: t.taskId, err: e.message }, 'enqueue failed; the outbox sweep will queue the task'),
    );
    return created;
  }

  private async push(taskId: string, userId: number): Promise<void> {
    await this.deps.queue.enqueue(taskId, userId);
    this.clearLater(taskId);
  }

  /** Clears the task's outbox entry with the others of this event-loop turn (see the header). */
  private clearLater(taskId: string): void {
    this.clearing.push(taskId);
    // setImmediate, not a microtask: the enqueues answered in one socket read resume over several
    // microtask hops; the check phase comes after all of them.
    this.clearFlush ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flushClears());
  }

  private async flushClears(): Promise<void> {
    const ids = this.clearing;
    this.clearing = [];
    this.clearFlush = null;
    await this.deps.outbox.doneMany(ids).catch((e: Error) =>
      this.deps.log.warn({ tasks: ids.length, err: e.message }, 'could not clear queued tasks from the enqueue outbox; the sweep drops them after the grace period'),
    );
  }

  /** Queues what dead submitters left behind. Returns how many it queued. */
  sweep(now = Date.now()): Promise<number> {
    return this.loop.run(now);
  }

  private pass(now: number): Promise<number> {
    return this.deps.outbox.drainDue(now - ENQUEUE_GRACE_MS, LEASE_MS, 100, async (taskId) => {
      const r = await this.deps.tasks.get(taskId);
      if (r?.status !== 'starting') return false;
      await this.deps.queue.enqueue(taskId, r.userId);
      return true;
    });
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  async close(): Promise<void> {
    await this.loop.stop();
    // Clears what this process queued last, before its connection closes.
    await this.clearFlush;
  }
}
