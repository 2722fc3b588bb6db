// Idempotent create (Idempotency-Key header): a request is known by its user, its key and a
// fingerprint of what it asks for. The create script (store/lua/create-task.lua) keeps one record
// per user and key for IDEMPOTENCY_TTL_MS, written in the same step as the task: a repeat with the
// same fingerprint answers the first task, one with another fingerprint is refused, and 50 repeats
// at once create one task, because the check and the write are one script.
import { createHash, hash } from 'node:crypto';

/** How long a key is remembered after its first use (the window Stripe and the IETF draft use). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/** What a key may be: the IETF draft's recommendation (a UUID fits) with Stripe's 255-character cap. */
const KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export const isIdempotencyKey = (key: string): boolean => KEY.test(key);

// One-shot crypto.hash (no Hash object per call): a keyed create hashes twice, key and fingerprint.
const sha256 = (text: string | Uint8Array) => hash('sha256', text, 'hex');

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
  // Loops and string concatenation rather than entries/filter/sort/map/join: this runs on every
  // create that carries an Idempotency-Key (bench core, section 5). Keys sort by UTF-16 code
  // units, as Array.prototype.sort compares strings.
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  let out = '{';
  for (const k of Object.keys(obj).sort()) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (out.length > 1 ? ',' : '') + JSON.stringify(k) + ':' + canonicalJson(v);
  }
  return `${out}}`;
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
