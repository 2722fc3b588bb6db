// A repeating failure (the worker heartbeat) is logged at once, then at most once a minute.
import { describe, expect, it } from 'vitest';
import { failureReporter, type Logger } from '../../src/domain/logger.ts';

function recordingLogger() {
  const lines: Array<{ level: string; obj: object; msg?: string }> = [];
  const at = (level: string) => (obj: object | string, msg?: string) => lines.push({ level, obj: typeof obj === 'string' ? {} : obj, msg: typeof obj === 'string' ? obj : msg });
  const log: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { log, lines };
}

describe('failureReporter', () => {
  it('logs the first failure, then one line a minute with the count it skipped, then the recovery', () => {
    const { log, lines } = recordingLogger();
    let now = 0;
    const r = failureReporter(log, 'worker heartbeat', 60_000, () => now);
    r.succeeded();
    expect(lines).toEqual([]);
    for (let i = 0; i < 13; i++, now += 5_000) r.failed(new Error('Connection is closed.'));
    // t = 0 logged; 5 s ... 55 s skipped (11); t = 60 s logged with that count
    expect(lines).toEqual([
      { level: 'warn', obj: { err: 'Connection is closed.' }, msg: 'worker heartbeat failed' },
      { level: 'warn', obj: { err: 'Connection is closed.', failuresNotLogged: 11 }, msg: 'worker heartbeat failed' },
    ]);
    r.succeeded();
    expect(lines[2]).toEqual({ level: 'info', obj: { failuresNotLogged: 0 }, msg: 'worker heartbeat works again' });
    r.failed('again');
    expect(lines[3]).toEqual({ level: 'warn', obj: { err: 'again' }, msg: 'worker heartbeat failed' });
  });
});
