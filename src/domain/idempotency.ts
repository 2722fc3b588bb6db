// Idempotent create (Idempotency-Key header): a request is known by its user, its key and a
// fingerprint of what it asks for. The create script (store/lua/create-task.lua) keeps one record
// per user and key for IDEMPOTENCY_TTL_MS, written in the same step as the task: a repeat with the
// same fingerprint answers the first task, one with another fingerprint is refused, and 50 repeats
// at once create one task, because the check and the write are one script.
import { createHash } from 'node:crypto';

/** How long a key is remembered after its first use (the window Stripe and the IETF draft use). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** What a key may be: the IETF draft's recommendation (a UUID fits) with Stripe's 255-character cap. */
const KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export const isIdempotencyKey = (key: string): boolean => KEY.test(key);

const sha256 = (text: string | Uint8Array) => createHash('sha256').update(text).digest('hex');

/**
 * The key as it is stored: its sha256, so any key has a fixed-length, binary-safe Redis name and
 * the key text itself (which a client may have derived from its own data) is not kept.
 */
export const idempotencyKeyHash = (key: string): string => sha256(key);

/**
 * JSON with object keys sorted at every depth: two requests that differ only in key order (or
 * whitespace) have one fingerprint. Arrays keep their order (it can mean something).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Fingerprint of a request: sha256 of the canonical JSON of `what` under a scope naming the
 * operation ("task", "job:hairstyle" ...), so one key reused on another operation is a different
 * request. Multipart jobs pass their text fields and the sha256 of each file's bytes (fileSha256).
 */
export const requestFingerprint = (scope: string, what: unknown): string => sha256(canonicalJson({ scope, what }));

/** sha256 (hex) of bytes, incrementally: for uploads hashed as they stream past. */
export function fileSha256() {
  const h = createHash('sha256');
  return { update: (chunk: Uint8Array) => void h.update(chunk), digest: () => h.digest('hex') };
}
