// Authorization: "Bearer <token>" (task API); the bare token is accepted too, as the job APIs use it.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors/codes.ts';
import type { Accounts } from '../store/accounts.ts';

export function tokenFrom(req: FastifyRequest): string | null {
  const h = req.headers.authorization?.trim();
  if (!h) return null;
  const m = /^Bearer(?:\s+(.*))?$/i.exec(h);
  const token = (m ? (m[1] ?? '') : h).trim();
  return token.length > 0 ? token : null;
}

/** The caller's user id, or AUTH_MISSING / AUTH_INVALID. */
export async function authenticate(req: FastifyRequest, accounts: Accounts): Promise<number> {
  const token = tokenFrom(req);
  if (!token) throw new AppError('AUTH_MISSING', 'missing Authorization header (expected "Bearer <API token>")');
  const userId = await accounts.resolve(token);
  if (userId === null) throw new AppError('AUTH_INVALID', 'invalid API token');
  return userId;
}
