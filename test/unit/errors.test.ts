// Which failures are retried: defects (TypeError, RangeError, ZodError ...) never, also after
// crossing the inference-thread boundary as JSON; a timed-out run once.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError, causeText, isFinalFailure, isProgramError, pastLimit, taskErrorText, toAppError } from '../../src/errors/codes.ts';

/** What the pool sees of an error thrown in an inference thread. */
const acrossThreads = (e: unknown) => AppError.fromJSON(structuredClone(toAppError(e).toJSON()));

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('did not throw');
}

describe('programming errors are not retried', () => {
  const defects: Array<[string, unknown]> = [
    ['TypeError', thrown(() => (undefined as unknown as { x: number }).x)],
    ['RangeError', thrown(() => new Array(-1))],
    ['ReferenceError', thrown(() => eval('notDefinedAnywhere'))],
    ['SyntaxError', thrown(() => JSON.parse('{'))],
    ['ZodError', thrown(() => z.object({ n: z.number() }).parse({ n: 'x' }))],
  ];

  it.each(defects)('%s becomes PROGRAM_ERROR, not retryable, on both sides of the thread boundary', (name, e) => {
    expect(isProgramError(e)).toBe(true);
    for (const err of [toAppError(e), acrossThreads(e)]) {
      expect(err.code).toBe('PROGRAM_ERROR');
      expect(err.retryable).toBe(false);
      expect(err.message.startsWith(`${name}: `)).toBe(true);
      expect(err.details).toEqual({ name });
    }
    expect(isFinalFailure(acrossThreads(e), { number: 1, max: 3 })).toBe(true);
  });

  it('keeps other unknown errors retryable, and memory exhaustion too', () => {
    for (const e of [new Error('socket hang up'), 'a string', new RangeError('Array buffer allocation failed')]) {
      const err = acrossThreads(e);
      expect(err.code).toBe('INTERNAL');
      expect(err.retryable).toBe(true);
      expect(isFinalFailure(err, { number: 1, max: 3 })).toBe(false);
    }
  });

  it('leaves cataloged errors as they are', () => {
    const e = new AppError('IMAGE_DECODE_FAILED', 'bad');
    expect(toAppError(e)).toBe(e);
    expect(acrossThreads(e).code).toBe('IMAGE_DECODE_FAILED');
  });
});

describe('inference timeouts', () => {
  const timeout = () => AppError.fromJSON(new AppError('INFERENCE_TIMEOUT').toJSON());

  it('are retried once, then final', () => {
    expect(timeout().retryable).toBe(true);
    expect(isFinalFailure(timeout(), { number: 1, max: 3, inferenceTimeouts: 0 })).toBe(false);
    expect(isFinalFailure(timeout(), { number: 2, max: 3, inferenceTimeouts: 1 })).toBe(true);
    // an earlier attempt that failed otherwise does not count
    expect(isFinalFailure(timeout(), { number: 2, max: 3, inferenceTimeouts: 0 })).toBe(false);
    expect(isFinalFailure(timeout(), { number: 1, max: 1 })).toBe(true);
  });
});

describe('what a failed task records, and what only the log sees', () => {
  it('keeps the low-level text as the cause, also across the thread boundary', () => {
    const libvips = new Error('pngload_buffer: libpng read error\nvips2png: unable to write to target');
    const e = new AppError('IMAGE_DECODE_FAILED', 'image could not be decoded (corrupt or truncated data)', undefined, { cause: libvips });
    const back = AppError.fromJSON(structuredClone(e.toJSON()));
    expect(back.message).toBe('image could not be decoded (corrupt or truncated data)');
    expect(causeText(back)).toBe(libvips.message);
    expect(taskErrorText(back)).toBe('IMAGE_DECODE_FAILED: image could not be decoded (corrupt or truncated data)');
  });

  it('records unknown errors in the catalog words, keeping a defect name', () => {
    const internal = acrossThreads(new Error("ENOENT: no such file or directory, open '/srv/blobs/x'"));
    expect(taskErrorText(internal)).toBe('INTERNAL: internal error');
    expect(causeText(internal)).toMatch(/ENOENT/);
    const defect = acrossThreads(thrown(() => (undefined as unknown as { x: number }).x));
    expect(taskErrorText(defect)).toBe('PROGRAM_ERROR: internal error (TypeError)');
    expect(taskErrorText(new AppError('NO_FACE_FOUND', 'no face found in image 2'))).toBe('NO_FACE_FOUND: no face found in image 2');
  });
});

describe('pastLimit (a refusal message\'s measured value)', () => {
  it('rounds to a whole number unless that would read as the limit itself', () => {
    expect(pastLimit(51.2, 45)).toBe('51');
    expect(pastLimit(45.4, 45)).toBe('45.4');
    expect(pastLimit(44.6, 45)).toBe('44.6');
    expect(pastLimit(9.6, 10)).toBe('9.6');
    expect(pastLimit(7.2, 10)).toBe('7');
    expect(pastLimit(24.8, 25)).toBe('24.8');
  });
});
