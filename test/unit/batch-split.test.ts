import { describe, expect, it } from 'vitest';
import { splitBatch } from '../../src/models/batcher.ts';

describe('splitBatch', () => {
  it('uses the largest imported sizes that fit, no padding', () => {
    const sizes = [1, 2, 4, 8, 16, 32, 64];
    expect(splitBatch(37, sizes)).toEqual([32, 4, 1]);
    expect(splitBatch(64, sizes)).toEqual([64]);
    expect(splitBatch(1, sizes)).toEqual([1]);
    expect(splitBatch(7, [1, 4])).toEqual([4, 1, 1, 1]);
    expect(splitBatch(0, sizes)).toEqual([]);
  });
});
