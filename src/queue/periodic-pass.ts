// A pass that runs on a timer and on demand, never two at once in one process. A call made while
// a pass is in flight joins it and makes it go round once more (what the caller wanted done may
// have been added after the pass read its schedule). The background jobs of every process use
// it: the enqueue outbox, the webhook outbox, the retention sweep and the lost-task sweep.
import { failureReporter, type Logger } from '../domain/logger.ts';
import { isRedisUnavailable } from '../store/redis.ts';

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
    // A failing pass is logged when it starts failing (then once a minute) and when it works
    // again, not on every pass; a pass failing because Redis is down is not logged at all (the
    // connection logs losing and regaining Redis once, see store/redis.ts).
    const outcome = failureReporter(this.log, this.name);
    this.timer = setInterval(
      () =>
        void this.run().then(
          () => outcome.succeeded(),
          (e: unknown) => {
            if (!isRedisUnavailable(e)) outcome.failed(e);
          },
        ),
      intervalMs,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => 0);
  }
}
