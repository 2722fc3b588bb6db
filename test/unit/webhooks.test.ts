import { describe, expect, it } from 'vitest';
import { nextRetryDelay, signWebhook, verifyWebhook, webhookEventId } from '../../src/domain/webhooks.ts';
import { isNonPublicAddress } from '../../src/domain/addresses.ts';

describe('Standard Webhooks signature', () => {
  it('matches the specification test vector', () => {
    // From the Standard Webhooks specification's reference libraries.
    const sig = signWebhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(sig).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('verifies what it signs, and nothing tampered or stale', () => {
    const secret = 'whsec_' + Buffer.alloc(32, 7).toString('base64');
    const ts = 1_800_000_000;
    const h = { id: webhookEventId('t1', 'succeeded'), timestamp: String(ts), signature: signWebhook(secret, 'evt_t1_succeeded', ts, '{"a":1}') };
    expect(verifyWebhook(secret, h, '{"a":1}', 300, ts)).toBe(true);
    expect(verifyWebhook(secret, h, '{"a":2}', 300, ts)).toBe(false);
    expect(verifyWebhook(secret, { ...h, id: 'evt_other' }, '{"a":1}', 300, ts)).toBe(false);
    expect(verifyWebhook(secret, h, '{"a":1}', 300, ts + 301)).toBe(false);
    expect(verifyWebhook(secret, { ...h, signature: `v1,bogus ${h.signature}` }, '{"a":1}', 300, ts)).toBe(true);
  });
});

describe('retry schedule', () => {
  const p = { baseDelayMs: 1000, windowMs: 60_000, minAttempts: 3 };
  const mid = () => 0.5;

  it('doubles with jitter between half and all of the exponential step', () => {
    expect(nextRetryDelay(1, 0, 0, p, () => 0)).toBe(500);
    expect(nextRetryDelay(1, 0, 0, p, () => 1)).toBe(1000);
    expect(nextRetryDelay(3, 5_000, 0, p, mid)).toBe(3000); // step 4000: 2000 + 1000
  });

  it('ends the cycle at the window: one last attempt on the deadline, then none', () => {
    expect(nextRetryDelay(6, 50_000, 0, p, mid)).toBe(10_000); // 24 s would cross 60 s
    expect(nextRetryDelay(7, 60_000, 0, p, mid)).toBe(-1);
    expect(nextRetryDelay(7, 61_000, 0, p, mid)).toBe(-1);
  });

  it('makes at least minAttempts even when the window is short', () => {
    const short = { baseDelayMs: 1000, windowMs: 900, minAttempts: 3 };
    const d1 = nextRetryDelay(1, 0, 0, short, mid);
    expect(d1).toBeLessThanOrEqual(450); // the two remaining attempts fit in the window
    expect(nextRetryDelay(2, 850, 0, short, mid)).toBe(50);
    expect(nextRetryDelay(2, 2000, 0, short, mid)).toBe(0); // late: retry at once
    expect(nextRetryDelay(3, 2000, 0, short, mid)).toBe(-1);
  });
});

describe('outbound address policy', () => {
  it.each([
    ['127.0.0.1', true], ['10.1.2.3', true], ['172.20.0.1', true], ['192.168.1.1', true], ['169.254.169.254', true],
    ['100.64.0.1', true], ['0.0.0.0', true], ['::1', true], ['fe80::1', true], ['fd00::1', true], ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false], ['1.1.1.1', false], ['2606:4700:4700::1111', false], ['not-an-ip', true],
  ])('%s non-public: %s', (ip, blocked) => {
    expect(isNonPublicAddress(ip)).toBe(blocked);
  });
});
