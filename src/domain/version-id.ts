// A model version is identified by the sha256 (hex) of its manifest's canonical JSON, so the ID
// changes whenever anything the version runs changes (a graph's sha256, a parameter, the pipeline).
import { createHash } from 'node:crypto';
import { z } from 'zod';

export const VersionIdSchema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'must be a 64-character lowercase hex version ID')
  .brand<'VersionId'>();

export type VersionId = z.infer<typeof VersionIdSchema>;

export function isVersionId(s: unknown): s is VersionId {
  return VersionIdSchema.safeParse(s).success;
}

/**
 * Canonical JSON: object keys sorted by code point, no whitespace, arrays in order. Rejects values
 * JSON cannot represent faithfully (undefined, functions, non-finite numbers) instead of dropping them.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries
      .map(([k, v]) => {
        if (v === undefined) throw new TypeError(`canonicalJson: undefined at key ${k}`);
        return `${JSON.stringify(k)}:${canonicalJson(v)}`;
      })
      .join(',')}}`;
  }
  throw new TypeError(`canonicalJson: unsupported type ${typeof value}`);
}

export function computeVersionId(manifest: unknown): VersionId {
  return createHash('sha256').update(canonicalJson(manifest)).digest('hex') as VersionId;
}
