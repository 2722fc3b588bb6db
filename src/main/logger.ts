// The pino owner for the non-HTTP parts (fastify makes its own from the same level).
import { pino } from 'pino';
import type { Logger } from '../domain/logger.ts';

export function createLogger(level: string, name: string): Logger {
  return pino({ level, name });
}
