// The try-on's mask arithmetic (src/pipelines/tryon/masks.ts) works on 32-bit words: checked here
// against the plain per-byte definitions, on random masks of any byte values, lengths that are not
// a multiple of 4 and unaligned views.
import { describe, expect, it } from 'vitest';
import { andNot, intersect, union } from '../../src/pipelines/tryon/masks.ts';

/** Deterministic pseudo-random bytes from a small set of values. */
function mask(n: number, seed: number, values: number[]): Uint8Array {
  const out = new Uint8Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    out[i] = values[(s >>> 16) % values.length]!;
  }
  return out;
}

describe('mask arithmetic', () => {
  for (const [what, values] of [
    ['0/1 masks', [0, 1]],
    ['any bytes', [0, 1, 2, 128, 255, 0, 0]],
  ] as const) {
    it(`union, intersect and andNot equal their per-byte definitions (${what})`, () => {
      for (const n of [0, 3, 4, 1001, 4096]) {
        const a = mask(n, 1, [...values]), b = mask(n, 2, [...values]), c = mask(n, 3, [...values]);
        expect([...union(a, b)]).toEqual([...a].map((v, i) => (v || b[i] ? 1 : 0)));
        expect([...intersect(a, b)]).toEqual([...a].map((v, i) => v & b[i]!));
        expect([...andNot(a, b)]).toEqual([...a].map((v, i) => (v && !b[i] ? 1 : 0)));
        expect([...andNot(a, b, c)]).toEqual([...a].map((v, i) => (v && !b[i] && !c[i] ? 1 : 0)));
      }
    });
  }

  it('takes unaligned views too', () => {
    const base = mask(1003, 7, [0, 1, 5]);
    const a = base.subarray(1, 1001), b = mask(1000, 8, [0, 1]);
    expect([...union(a, b)]).toEqual([...a].map((v, i) => (v || b[i] ? 1 : 0)));
    expect([...andNot(a, b)]).toEqual([...a].map((v, i) => (v && !b[i] ? 1 : 0)));
  });
});
