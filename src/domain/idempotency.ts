// Idempotent create (Idempotency-Key header): a request is known by its user, its key and a
// fingerprint of what it asks for. The create script (store/lua/create-task.lua) checks and writes
// the key's record in the same step as the task: a repeat with the same fingerprint answers the
// first task, one with another fingerprint is refused, and 50 repeats at once create one task,
// because the check and the write are one script. On create-task the task's id is derived from the
// user and key, so the task record is the key's record (kept as long as the record, at least 24 h);
// a create-job, whose uploads are stored under a fresh id before the job exists, keeps a record of
// its own per user and key for IDEMPOTENCY_TTL_MS.
import { createHash, hash } from 'node:crypto';
import { canonicalJson } from './version-id.ts';

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
 * The id of the task a user's key creates on create-task (32 hex characters, as a random id): its
 * record is then the key's record, so a repeat finds the first task by its id, and a keyed create
 * writes no record of its own (see create-task.lua). Per user: one key from two users is two tasks.
 */
export const idempotentTaskId = (userId: number, keyHash: string): string => sha256(`${userId}/${keyHash}`).slice(0, 32);

/**
 * Fingerprint of a create-job: sha256 of the canonical JSON (keys sorted, as version ids are
 * computed) of `what` under a scope naming the operation ("job:hairstyle" ...), so one key reused
 * on another operation is a different request: its text fields as sent and the sha256 of each
 * file's bytes (fileSha256).
 */
export const requestFingerprint = (scope: string, what: unknown): string => sha256(canonicalJson({ scope, what }));

/**
 * Fingerprint of a create-task: what the task is, as the API stores it. `input` is the pipeline's
 * schema output (strict objects, so keys in the schema's order whatever the client's, and defaults
 * filled in: an omitted default and the same value sent are one request), so one JSON.stringify
 * stands in for canonicalJson's sorted walk, the larger part of a keyed create's own cost
 * (bench core, section 5). `Prefer` is not part of it: it asks how to answer, not what to do.
 */
export const taskFingerprint = (version: string, input: unknown, webhookUrl: string | null, cancelAfterMs: number | null): string =>
  sha256(JSON.stringify(['task', version, input, webhookUrl, cancelAfterMs]));

/** sha256 (hex) of bytes, incrementally: for uploads hashed as they stream past. */
export function fileSha256() {
  const h = createHash('sha256');
  return { update: (chunk: Uint8Array) => void h.update(chunk), digest: () => h.digest('hex') };
}
