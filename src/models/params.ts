// Reading a version's manifest params with a clear error when one is missing or of the wrong type.
import { AppError } from '../errors/codes.ts';

export function numberParam(params: Readonly<Record<string, unknown>>, key: string, pipeline: string): number {
  const v = params[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new AppError('MODEL_UNAVAILABLE', `${pipeline}: manifest param ${key} must be a number`);
  return v;
}

export function stringParam(params: Readonly<Record<string, unknown>>, key: string, pipeline: string): string {
  const v = params[key];
  if (typeof v !== 'string') throw new AppError('MODEL_UNAVAILABLE', `${pipeline}: manifest param ${key} must be a string`);
  return v;
}

