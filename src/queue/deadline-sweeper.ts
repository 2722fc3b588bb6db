// Cancel-After: ends tasks that reach their deadline before they end. The create script puts a
// task with a deadline in a schedule (zset: task id -> deadline ms); every process sweeps the due
// entries, leased as the other sweeps are (store/schedules.ts), so one process handles each.
//
// - Still starting (queued, never started): canceled here at the deadline, refunded, its queue job
//   removed; the error and logs say it never started.
// - Processing: its worker holds a timer for the deadline and stops the run at its next stage
//   boundary (task-processor.ts), so the sweep leaves it alone for RUNNING_GRACE_MS and only then
//   cancels it, for a worker that died or runs code without deadlines.
// - Ended (or expired): dropped from the schedule. (The end does not remove the entry; an entry
//   stays at most until its deadline, at most 24 h.)
//
// Refunds: a canceled task is refunded whether it had started or not, as a canceled or failed task
// always is here: credits pay for results, and a task canceled at its deadline delivers none (any
// outputs it had stored are deleted).
import { taskErrorText, AppError } from '../errors/codes.ts';
import type { Logger } from '../domain/logger.ts';
import { isTerminal, type TaskRecord } from '../domain/task.ts';
import type { Schedule } from '../store/schedules.ts';
import type { TaskStore } from '../store/task-store.ts';
import { PeriodicPass } from './periodic-pass.ts';
import type { TaskQueue } from './task-queue.ts';

const BATCH = 100;
/** How long past its deadline a processing task is left to its worker before the sweep ends it. */
export const RUNNING_GRACE_MS = 10_000;
/** A processing task within its grace comes back to the sweep after this long. */
const LEASE_MS = 5_000;

/** "30 s", "2 min", "1 h 30 min": a Cancel-After as people write it. */
function durationText(ms: number): string {
  const s = Math.round(ms / 1000);
  const parts = [
    [Math.floor(s / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'min'],
    [s % 60, 's'],
  ] as const;
  return parts.filter(([n]) => n > 0).map(([n, u]) => `${n} ${u}`).join(' ') || `${ms} ms`;
}

export type DeadlineMoment = { started: false } | { started: true; stage: string; by: 'worker' | 'sweep' };

/**
 * The `error` and `logs` a task canceled at its deadline gets: what happened, whether it had
 * started, and that its credits were refunded. `logs` are the stage timings it has so far.
 */
export function deadlineCancel(record: Pick<TaskRecord, 'cost' | 'createdMs' | 'deadlineMs'>, at: DeadlineMoment, logs?: string | null): { error: string; logs: string } {
  const after = record.deadlineMs == null ? 'its deadline' : `its Cancel-After of ${durationText(record.deadlineMs - record.createdMs)}`;
  const refund = record.cost > 0 ? `its ${record.cost} credit${record.cost === 1 ? ' was' : 's were'} refunded` : 'it was not charged';
  const what = !at.started
    ? `canceled at ${after}: it never started; ${refund}`
    : at.by === 'worker'
      ? `canceled at ${after} while running (stage: ${at.stage}); the run stopped there and ${refund}`
      : `canceled at ${after} while running; its worker did not stop it, so the deadline sweep did; ${refund}`;
  return {
    error: taskErrorText(new AppError('DEADLINE_EXCEEDED', what)),
    logs: [logs, `canceled: ${what}`].filter(Boolean).join('\n'),
  };
}

export interface DeadlineSweeperDeps {
  /** The deadline schedule (keyspace.deadlines). */
  schedule: Schedule;
  tasks: TaskStore;
  queue: Pick<TaskQueue, 'removeIfQueued'>;
  log: Logger;
}

export class DeadlineSweeper {
  private readonly loop: PeriodicPass;

  constructor(private readonly deps: DeadlineSweeperDeps) {
    this.loop = new PeriodicPass('deadline sweep', (now) => this.pass(now), deps.log);
  }

  /** One pass over the deadlines due by `now`; resolves to how many tasks it canceled. */
  sweep(now = Date.now()): Promise<number> {
    return this.loop.run(now);
  }

  private async pass(now: number): Promise<number> {
    const { schedule, tasks, queue, log } = this.deps;
    let canceled = 0;
    for (;;) {
      const due = await schedule.claimDue(now, LEASE_MS, BATCH);
      for (const taskId of due) {
        const r = await tasks.get(taskId);
        if (!r || isTerminal(r.status)) {
          await schedule.done(taskId);
          continue;
        }
        // Its worker stops it at the deadline; the entry stays leased and comes back.
        if (r.status === 'processing' && now < (r.deadlineMs ?? 0) + RUNNING_GRACE_MS) continue;
        const why = deadlineCancel(r, r.status === 'starting' ? { started: false } : { started: true, stage: 'unknown', by: 'sweep' }, r.logs);
        const c = await tasks.cancel(taskId, r.userId, why);
        if (c.result === 'ok') {
          canceled++;
          log.info({ taskId, previous: c.previous }, 'task canceled at its Cancel-After deadline');
          // Queued: drop its job. Should that fail, the worker that takes it finds it canceled.
          if (c.previous === 'starting') {
            await queue.removeIfQueued(taskId).catch((e: Error) => log.warn({ taskId, err: e.message }, 'could not remove a task canceled at its deadline from the queue; its worker will skip it'));
          }
        }
        await schedule.done(taskId);
      }
      if (due.length < BATCH) return canceled;
    }
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  close(): Promise<void> {
    return this.loop.stop();
  }
}
