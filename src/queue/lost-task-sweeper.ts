// Ends tasks that nothing will end any more: the record says starting or processing, but its
// BullMQ job has failed for good or is gone. Normally the worker's `failed` handler (task-worker.ts)
// or processTask ends the record; that step is lost when the process dies, or Redis errors, between
// BullMQ failing the job and the record being written, and the record would stay processing (and
// its credits charged) forever.
//
// Cheap by construction: the create and claim scripts keep an index of active tasks (zset: task id
// -> when its next check is due), the terminal script drops each task from it, and a pass only
// looks at entries that are due, leasing them (pushing their score out by the check interval) so
// that of many processes sweeping at once one checks each task, once per interval. A check is two
// O(1) reads of the job (TaskQueue.jobFates) and one of the record. The fail goes through the task
// store's conditional transition: a task that ended meanwhile is left as it is, and the refund is
// made once whoever fails it.
import type { Logger } from '../domain/logger.ts';
import type { Schedule } from '../store/schedules.ts';
import type { TaskStore } from '../store/task-store.ts';
import { PeriodicPass } from './periodic-pass.ts';
import type { TaskQueue } from './task-queue.ts';
import { ENQUEUE_GRACE_MS } from './task-submitter.ts';

const BATCH = 100;

export interface LostTaskSweeperDeps {
  /** The active-task index (keyspace.activeTasks). */
  index: Schedule;
  /** The enqueue outbox: a starting task still in it is the outbox sweep's, not lost. */
  outbox: Schedule;
  tasks: TaskStore;
  queue: Pick<TaskQueue, 'jobFates'>;
  log: Logger;
  /** Called after a task was ended (to queue its webhook at once). */
  onEnded?: () => void;
}

export class LostTaskSweeper {
  private readonly loop: PeriodicPass;

  /** `checkMs`: how often each active task's job is looked at (LOST_TASK_CHECK_MS). */
  constructor(
    private readonly deps: LostTaskSweeperDeps,
    private readonly checkMs: number,
  ) {
    this.loop = new PeriodicPass('lost-task sweep', (now) => this.pass(now), deps.log);
  }

  /** One pass over the tasks due a check by `now`; resolves to how many it ended. */
  sweep(now = Date.now()): Promise<number> {
    return this.loop.run(now);
  }

  private async pass(now: number): Promise<number> {
    let ended = 0;
    for (;;) {
      // Entries younger than the enqueue grace belong to a create or a claim still in flight.
      const due = await this.deps.index.claimDue(now - ENQUEUE_GRACE_MS, this.checkMs, BATCH);
      if (due.length) ended += await this.check(due);
      if (due.length < BATCH) return ended;
    }
  }

  private async check(taskIds: string[]): Promise<number> {
    const { tasks, index, outbox, queue, log } = this.deps;
    const statuses = await Promise.all(taskIds.map((id) => tasks.status(id)));
    const active = taskIds.filter((_, i) => statuses[i] === 'starting' || statuses[i] === 'processing');
    // Ended (or expired) records have no business in the index.
    await index.doneMany(taskIds.filter((id) => !active.includes(id)));
    const fates = await queue.jobFates(active);
    let ended = 0;
    for (const [i, taskId] of active.entries()) {
      const f = fates[i]!;
      if (f.fate === 'live') continue;
      if (f.fate === 'gone' && (await outbox.has(taskId))) continue;
      const why =
        f.fate === 'failed'
          ? `its queue job failed (${f.reason || 'no reason given'}) and the task was never ended`
          : 'its queue job is gone and the task was never ended';
      const r = await tasks.fail(taskId, `WORKER_LOST: ${why} (found by the lost-task sweep)`);
      if (r.result !== 'ok') continue; // ended meanwhile: whoever ended it wrote the record
      ended++;
      log.warn({ taskId, previous: r.previous, fate: f.fate }, 'lost task failed and refunded');
    }
    if (ended) this.deps.onEnded?.();
    return ended;
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  close(): Promise<void> {
    return this.loop.stop();
  }
}
