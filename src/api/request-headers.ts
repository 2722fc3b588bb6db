// Request headers of the create operations: Idempotency-Key (create-task and both create-jobs),
// Cancel-After and Prefer: wait (create-task). Each reads one header and refuses a malformed one
// with its own error, or says it is absent.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/codes.ts';
import { idempotencyKeyHash, isIdempotencyKey } from '../domain/idempotency.ts';

/** The longest Prefer: wait honoured; a longer one is applied as this (RFC 7240 lets a server do less). */
export const MAX_WAIT_S = 60;
const MIN_CANCEL_AFTER_MS = 1_000;
const MAX_CANCEL_AFTER_MS = 24 * 3_600_000;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A header's one value (a repeated header is refused by the callers as malformed). */
function header(req: FastifyRequest, name: string): string | string[] | undefined {
  return req.headers[name];
}

/** Idempotency-Key's sha256, or undefined when the header is absent. Throws IDEMPOTENCY_KEY_INVALID. */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const v = header(req, 'idempotency-key');
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !isIdempotencyKey(v)) {
    const why = typeof v !== 'string' ? 'it was sent more than once' : v.length > 255 ? `it has ${v.length} characters` : v.trim() === '' ? 'it is empty' : 'it has characters outside visible ASCII';
    throw new AppError('IDEMPOTENCY_KEY_INVALID', `Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say); ${why}`);
  }
  return idempotencyKeyHash(v);
}

/**
 * Cancel-After in milliseconds, or undefined when absent. A duration as Replicate and Go write
 * them: whole numbers with units h, m, s, ms, largest first (`30s`, `2m`, `1h30m`, `1500ms`),
 * from 1 s to 24 h. Throws CANCEL_AFTER_INVALID.
 */
export function cancelAfterMsOf(req: FastifyRequest): number | undefined {
  const v = header(req, 'cancel-after');
  if (v === undefined) return undefined;
  const text = typeof v === 'string' ? v.trim() : '';
  const ms = parseDuration(text);
  if (ms === undefined) {
    throw new AppError('CANCEL_AFTER_INVALID', `Cancel-After must be a duration such as 30s, 2m or 1h30m (got ${JSON.stringify(typeof v === 'string' ? v.slice(0, 40) : v)})`);
  }
  if (ms < MIN_CANCEL_AFTER_MS || ms > MAX_CANCEL_AFTER_MS) {
    throw new AppError('CANCEL_AFTER_INVALID', `Cancel-After must be from 1s to 24h (got ${text})`);
  }
  return ms;
}

/** "1h30m" -> 5400000; undefined unless the whole text is number+unit parts, units largest first, each once. */
export function parseDuration(text: string): number | undefined {
  const parts = /^(?:(\d{1,5})h)?(?:(\d{1,5})m(?!s))?(?:(\d{1,5})s)?(?:(\d{1,8})ms)?$/.exec(text);
  if (!parts || text === '') return undefined;
  const [, h, m, s, ms] = parts;
  return Number(h ?? 0) * UNIT_MS.h! + Number(m ?? 0) * UNIT_MS.m! + Number(s ?? 0) * UNIT_MS.s! + Number(ms ?? 0) * UNIT_MS.ms!;
}

/**
 * Seconds asked for by `Prefer: wait=N` (RFC 7240; with other preferences, comma-separated),
 * capped at MAX_WAIT_S; undefined when there is none or N is 0. A preference that cannot be read
 * is ignored, as RFC 7240 asks of a server, not refused.
 */
export function preferredWaitSOf(req: FastifyRequest): number | undefined {
  const v = header(req, 'prefer');
  const values = v === undefined ? [] : Array.isArray(v) ? v : [v];
  for (const pref of values.flatMap((x) => x.split(','))) {
    const m = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*(?:;.*)?$/i.exec(pref);
    if (m) {
      const n = Math.min(Number(m[1]), MAX_WAIT_S);
      return n > 0 ? n : undefined;
    }
  }
  return undefined;
}
