// What counts as "Redis is down" (503 store_unavailable, Retry-After) and what stays a server fault
// (500 internal): the shapes of ioredis' errors, checked without a Redis.
import { describe, expect, it } from 'vitest';
import { asStoreUnavailable, isRedisUnavailable } from '../../src/store/redis.ts';

const named = (name: string, message: string) => Object.assign(new Error(message), { name });

describe('isRedisUnavailable', () => {
  it('recognises a link that is down, closed, refused, not answering, or a Redis still loading', () => {
    for (const e of [
      new Error('Connection is closed.'),
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      new Error('Command timed out'),
      named('MaxRetriesPerRequestError', 'Reached the max retries per request limit (which is 0). Refer to "maxRetriesPerRequest" option for details.'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      named('ReplyError', 'LOADING Redis is loading the dataset in memory'),
      new Error('enqueue failed', { cause: new Error('Connection is closed.') }),
    ]) {
      expect(isRedisUnavailable(e), e.message).toBe(true);
    }
  });

  it('leaves other errors alone: a bad command, a script error, a defect, a non-error', () => {
    for (const e of [
      named('ReplyError', 'WRONGTYPE Operation against a key holding the wrong kind of value'),
      named('ReplyError', 'ERR Error running script'),
      new TypeError("Cannot read properties of undefined (reading 'x')"),
      'Connection is closed.',
      undefined,
    ]) {
      expect(isRedisUnavailable(e)).toBe(false);
    }
  });

  it('maps to STORE_UNAVAILABLE (503, retryable), keeping the cause', () => {
    const cause = new Error('Connection is closed.');
    const e = asStoreUnavailable(cause)!;
    expect(e).toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503, retryable: true });
    expect(e.cause).toBe(cause);
    expect(asStoreUnavailable(new Error('WRONGTYPE x'))).toBeUndefined();
  });
});
