// The scratch-plane pool (src/imaging/scratch.ts): memory given back is handed out again, zeroed,
// for a plane that fits; small planes are not pooled; the pool is bounded.
import { describe, expect, it } from 'vitest';
import { giveBack, takePlane } from '../../src/imaging/scratch.ts';

describe('scratch planes', () => {
  it("hands a plane's memory out again for a plane that fits, zeroed", () => {
    const a = takePlane(1 << 17);
    a.fill(3);
    giveBack(a);
    const b = takePlane(1 << 17);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(1 << 17);
    expect(b.every((v) => v === 0)).toBe(true);
    // Taken: not handed out twice.
    expect(takePlane(1 << 17).buffer).not.toBe(a.buffer);
    // A smaller plane (more than half the size) fits in it, as a view of its start.
    giveBack(b);
    const c = takePlane(100_000);
    expect(c.buffer).toBe(a.buffer);
    expect(c.length).toBe(100_000);
    giveBack(c);
  });

  it('never puts a plane in memory too small or over twice its size, and does not pool small ones', () => {
    const big = takePlane(1 << 17);
    giveBack(big);
    expect(takePlane((1 << 17) + 1).buffer).not.toBe(big.buffer);
    expect(takePlane((1 << 15) - 1).buffer).not.toBe(big.buffer);
    const small = takePlane(100);
    giveBack(small);
    expect(takePlane(100).buffer).not.toBe(small.buffer);
    expect(takePlane(1 << 17).buffer).toBe(big.buffer);
  });

  it('keeps at most 16 buffers (the oldest dropped first)', () => {
    const planes = Array.from({ length: 18 }, () => takePlane(1 << 16));
    giveBack(...planes);
    const back = Array.from({ length: 18 }, () => takePlane(1 << 16).buffer);
    expect(back.filter((b) => planes.some((p) => p.buffer === b))).toHaveLength(16);
    expect(back.includes(planes[0]!.buffer)).toBe(false);
    expect(back.includes(planes[1]!.buffer)).toBe(false);
  });
});
