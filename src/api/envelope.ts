// The response envelope {code, result, message}. The task API's success code is 200; its error
// codes are the HTTP statuses of the catalog (the spec leaves them open; see the README table).
import type { FastifyReply } from 'fastify';
import { retryAfterS, type AppError } from '../errors/codes.ts';

export interface Envelope<T> {
  code: number;
  result: T;
  message: Record<string, string>;
}

export function ok<T>(result: T, en?: string): Envelope<T> {
  return { code: 200, result, message: en === undefined ? {} : { en } };
}

export function errorEnvelope(e: AppError): Envelope<Record<string, unknown>> {
  return { code: e.status, result: { error: e.code.toLowerCase(), ...e.details }, message: { en: e.message } };
}

/** Sets Retry-After on an error answer whose code carries one (STORE_UNAVAILABLE, UPLOADS_BUSY). */
export function setRetryAfter(reply: FastifyReply, e: AppError): void {
  const seconds = retryAfterS(e.code);
  if (seconds !== undefined) reply.header('retry-after', String(seconds));
}
