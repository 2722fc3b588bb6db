// A pass that runs on a timer and on demand, never two at once in one process. A call made while
// a pass is in flight joins it and makes it go round once more (what the caller wanted done may
// have been added after the pass read its schedule). The background jobs of every process use
// it: the enqueue outbox, the webhook outbox and the retention sweep.
import type { Logger } from '../domain/logger.ts';

export class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private again = false;

  constructor(
    private readonly name: string,
    private readonly pass: (nowMs: number) => Promise<number>,
    private readonly log: Logger,
  ) {}

  /** Runs a pass now (or joins the one in flight); resolves to what it handled. */
  run(nowMs?: number): Promise<number> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      let handled = 0;
      do {
        this.again = false;
        handled += await this.pass(nowMs ?? Date.now());
      } while (this.again);
      return handled;
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run().catch((e: Error) => this.log.warn({ err: e.message }, `${this.name} failed`)), intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => 0);
  }
}
