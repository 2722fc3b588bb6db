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
