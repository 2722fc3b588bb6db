// Webhook events: Standard Webhooks signing (https://www.standardwebhooks.com) and the retry
// schedule. Pure functions: the queue does the I/O.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new signing secret in the Standard Webhooks form: "whsec_" + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function secretKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`, keyed by the secret's bytes. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', secretKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** Receiver-side check (also what the README shows): any listed v1 signature may match. */
export function verifyWebhook(secret: string, headers: { id: string; timestamp: string; signature: string }, body: string, toleranceS = 300, nowS = Date.now() / 1000): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowS - ts) > toleranceS) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, ts, body));
  return headers.signature.split(' ').some((sig) => {
    const got = Buffer.from(sig);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

/** Every delivery of one event carries this id, so receivers can drop duplicates. */
export function webhookEventId(taskId: string, status: string): string {
  return `evt_${taskId}_${status}`;
}

export interface RetryPolicy {
  /** Delay before the second attempt; doubles for each further one (with jitter). */
  baseDelayMs: number;
  /** The cycle ends this long after the task completed. */
  windowMs: number;
  /** Attempts made even when the window is short (the delays shrink to fit). */
  minAttempts: number;
}

/**
 * Delay before the next attempt, or -1 when the cycle is over. `attemptsMade` counts the attempts
 * made so far (at least 1). Exponential backoff with "equal jitter" (half fixed, half random);
 * a delay that would cross the deadline is cut so the last attempt lands on the deadline, and
 * while fewer than minAttempts were made the delays shrink so the rest fit before it.
 */
export function nextRetryDelay(attemptsMade: number, nowMs: number, completedMs: number, p: RetryPolicy, random = Math.random): number {
  const deadline = completedMs + p.windowMs;
  const remaining = deadline - nowMs;
  const exp = p.baseDelayMs * 2 ** (attemptsMade - 1);
  let delay = exp / 2 + (random() * exp) / 2;
  if (attemptsMade < p.minAttempts) {
    return Math.max(0, Math.min(delay, remaining / (p.minAttempts - attemptsMade)));
  }
  if (remaining <= 0) return -1;
  if (delay > remaining) delay = remaining; // one last attempt, at the deadline
  return delay;
}
