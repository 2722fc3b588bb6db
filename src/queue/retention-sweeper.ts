// Deletes task (and, later, job) inputs, outputs and logs when their retention ends. The schedule
// is written by the terminal-status Lua script, so no ended task is missed; members are leased
// while being deleted, so many API and worker processes can sweep at once without doing the same
// work twice, and a sweeper that dies mid-way leaves its members to the next one.
import type { Logger } from '../domain/logger.ts';
import type { BlobStore } from '../store/blob-store.ts';
import type { Schedule } from '../store/schedules.ts';
import type { TaskStore } from '../store/task-store.ts';
import { PeriodicPass } from './periodic-pass.ts';
import { taskPrefix } from '../domain/blob-keys.ts';

const LEASE_MS = 60_000;
const BATCH = 100;

export class RetentionSweeper {
  private readonly loop: PeriodicPass;

  constructor(private readonly deps: { schedule: Schedule; tasks: TaskStore; blobs: BlobStore; log: Logger }) {
    this.loop = new PeriodicPass('retention sweep', (now) => this.pass(now), deps.log);
  }

  /** One pass: everything due by `now`. Returns how many items it purged. */
  sweep(now = Date.now()): Promise<number> {
    return this.loop.run(now);
  }

  private pass(now: number): Promise<number> {
    return this.deps.schedule.drainDue(now, LEASE_MS, BATCH, async (member) => {
      const [kind, id] = member.split(':', 2) as [string, string];
      if (kind !== 'task') {
        this.deps.log.warn({ member }, 'retention: unknown schedule entry dropped');
        return false;
      }
      await this.deps.blobs.removePrefix(taskPrefix(id));
      await this.deps.tasks.purge(id);
      return true;
    });
  }

  start(intervalMs: number): void {
    this.loop.start(intervalMs);
  }

  close(): Promise<void> {
    return this.loop.stop();
  }
}
