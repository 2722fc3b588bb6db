// The scratch-plane pool (src/imaging/scratch.ts): planes given back are handed out again, zeroed;
// small planes are not pooled; the pool is bounded.
import { describe, expect, it } from 'vitest';
import { givePlanes, takePlane } from '../../src/imaging/scratch.ts';

describe('scratch planes', () => {
  it('hands a plane given back out again for the same length, zeroed', () => {
    const a = takePlane(1 << 17);
    a.fill(3);
    givePlanes(a);
    const b = takePlane(1 << 17);
    expect(b).toBe(a);
    expect(b.every((v) => v === 0)).toBe(true);
    // Taken: not handed out twice.
    expect(takePlane(1 << 17)).not.toBe(a);
  });

  it('keeps planes of another length apart, and does not pool small ones', () => {
    const big = takePlane(1 << 17);
    givePlanes(big);
    expect(takePlane((1 << 17) + 1)).not.toBe(big);
    const small = takePlane(100);
    givePlanes(small);
    expect(takePlane(100)).not.toBe(small);
    expect(takePlane(1 << 17)).toBe(big);
  });

  it('keeps at most 12 planes (the oldest dropped first)', () => {
    const planes = Array.from({ length: 14 }, () => takePlane(1 << 16));
    givePlanes(...planes);
    const back = Array.from({ length: 14 }, () => takePlane(1 << 16));
    // The two oldest were dropped: 12 of the 14 come back, the first two do not.
    expect(back.filter((p) => planes.includes(p))).toHaveLength(12);
    expect(back.includes(planes[0]!)).toBe(false);
    expect(back.includes(planes[1]!)).toBe(false);
  });
});
