// Cancel-After durations and Prefer: wait, as the create-task route reads them.
import { describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { cancelAfterMsOf, idempotencyKeyOf, parseDuration, preferredWaitSOf } from '../../src/api/request-headers.ts';
import { requestFingerprint, taskFingerprint } from '../../src/domain/idempotency.ts';

const req = (headers: Record<string, string>) => ({ headers }) as unknown as FastifyRequest;

describe('request headers', () => {
  it('reads durations as Replicate and Go write them', () => {
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('2m')).toBe(120_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('1500ms')).toBe(1_500);
    for (const bad of ['', '30', '1.5s', 's', '2m1h', '1 h', '-1s', '1d']) expect(parseDuration(bad), bad).toBeUndefined();
    expect(cancelAfterMsOf(req({}))).toBeUndefined();
    expect(cancelAfterMsOf(req({ 'cancel-after': ' 45s ' }))).toBe(45_000);
    expect(() => cancelAfterMsOf(req({ 'cancel-after': '500ms' }))).toThrow(/from 1s to 24h/);
    expect(() => cancelAfterMsOf(req({ 'cancel-after': 'later' }))).toThrow(/duration such as/);
  });

  it('reads Prefer: wait among other preferences, caps it at 60 and ignores what it cannot read', () => {
    expect(preferredWaitSOf(req({ prefer: 'wait=5' }))).toBe(5);
    expect(preferredWaitSOf(req({ prefer: 'respond-async, wait=10' }))).toBe(10);
    expect(preferredWaitSOf(req({ prefer: 'wait=120' }))).toBe(60);
    expect(preferredWaitSOf(req({ prefer: 'wait=0' }))).toBeUndefined();
    expect(preferredWaitSOf(req({ prefer: 'wait=soon' }))).toBeUndefined();
    expect(preferredWaitSOf(req({}))).toBeUndefined();
  });

  it('keeps an Idempotency-Key as its sha256 and refuses a malformed one', () => {
    expect(idempotencyKeyOf(req({ 'idempotency-key': 'abc' }))).toMatch(/^[0-9a-f]{64}$/);
    expect(() => idempotencyKeyOf(req({ 'idempotency-key': 'a'.repeat(256) }))).toThrow(/256 characters/);
    expect(() => idempotencyKeyOf(req({ 'idempotency-key': 'é' }))).toThrow(/visible ASCII/);
  });

  it('fingerprints ignore key order, not values, arrays order or the operation', () => {
    expect(requestFingerprint('job:hairstyle', { a: 1, b: { d: [2, 1], c: null } })).toBe(requestFingerprint('job:hairstyle', { b: { c: null, d: [2, 1] }, a: 1 }));
    expect(requestFingerprint('job:hairstyle', { a: [1, 2] })).not.toBe(requestFingerprint('job:hairstyle', { a: [2, 1] }));
    expect(requestFingerprint('job:tryon', { a: 1 })).not.toBe(requestFingerprint('job:hairstyle', { a: 1 }));
  });

  it('a create-task is known by its version, input, webhook and deadline', () => {
    const v = 'a'.repeat(64);
    const f = taskFingerprint(v, { image: 'http://x/a.png', min_score: 0.5 }, null, null);
    expect(f).toMatch(/^[0-9a-f]{64}$/);
    expect(taskFingerprint(v, { image: 'http://x/a.png', min_score: 0.5 }, null, null)).toBe(f);
    for (const other of [
      taskFingerprint('b'.repeat(64), { image: 'http://x/a.png', min_score: 0.5 }, null, null),
      taskFingerprint(v, { image: 'http://x/a.png', min_score: 0.6 }, null, null),
      taskFingerprint(v, { image: 'http://x/a.png', min_score: 0.5 }, 'http://x/hook', null),
      taskFingerprint(v, { image: 'http://x/a.png', min_score: 0.5 }, null, 30_000),
    ]) expect(other).not.toBe(f);
  });
});
