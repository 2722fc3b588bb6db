// The logging surface libraries depend on. pino's logger (made in main/) satisfies it; tests can
// pass a silent one.
export interface LogFn {
  (obj: object, msg?: string): void;
  (msg: string): void;
}

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

const noop: LogFn = () => {};
export const silentLogger: Logger = { debug: noop, info: noop, warn: noop, error: noop };

/**
 * Reports a repeating failure (a heartbeat that cannot reach Redis, say) without flooding the log:
 * the first failure at once, then at most one line per `intervalMs` saying how many were not
 * logged in between, and one line when it works again.
 */
export function failureReporter(log: Logger, what: string, intervalMs = 60_000, now: () => number = Date.now) {
  let failing = false;
  let lastLoggedMs = 0;
  let unlogged = 0;
  return {
    failed(e: unknown): void {
      const err = e instanceof Error ? e.message : String(e);
      const t = now();
      if (failing && t - lastLoggedMs < intervalMs) {
        unlogged++;
        return;
      }
      log.warn({ err, ...(failing ? { failuresNotLogged: unlogged } : {}) }, `${what} failed`);
      failing = true;
      lastLoggedMs = t;
      unlogged = 0;
    },
    succeeded(): void {
      if (!failing) return;
      log.info({ failuresNotLogged: unlogged }, `${what} works again`);
      failing = false;
      unlogged = 0;
    },
  };
}
