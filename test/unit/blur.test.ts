// imaging/blur.ts: the almost-Gaussian blur (three boxes) and the blur estimate the hairstyle
// uses to soften drawn hair to the photo's focus. A synthetic image of vertical and horizontal
// step edges, blurred by known sigmas, reads back close to them, in order.
import { describe, expect, it } from 'vitest';
import { blurSigma, gaussianBlur, gaussianBlurInPlace } from '../../src/imaging/blur.ts';

const W = 96, H = 96;
/** A checkerboard of 24 px squares (levels 60 and 190): edges both ways. */
const board = Float32Array.from({ length: W * H }, (_, i) => (((i % W) / 24 | 0) + ((i / W | 0) / 24 | 0)) % 2 ? 190 : 60);
const all = new Uint8Array(W * H).fill(1);

describe('gaussianBlur', () => {
  it('keeps the mean and spreads a point by about sigma', () => {
    const dot = new Float32Array(W * H);
    dot[48 * W + 48] = 1000;
    const b = gaussianBlur(dot, W, H, 3);
    let sum = 0, m2 = 0;
    for (let i = 0; i < b.length; i++) {
      sum += b[i]!;
      m2 += b[i]! * ((i % W) - 48) ** 2;
    }
    expect(sum).toBeCloseTo(1000, 1);
    expect(Math.sqrt(m2 / sum)).toBeGreaterThan(2.7);
    expect(Math.sqrt(m2 / sum)).toBeLessThan(3.3);
  });
});

describe('gaussianBlurInPlace at half resolution', () => {
  it('spreads a point by about sigma too, and keeps the mean', () => {
    const dot = new Float32Array(W * H);
    dot[48 * W + 48] = 1000;
    gaussianBlurInPlace([dot], W, H, 3, { halfRes: true });
    let sum = 0, m2 = 0;
    for (let i = 0; i < dot.length; i++) {
      sum += dot[i]!;
      m2 += dot[i]! * ((i % W) - 48) ** 2;
    }
    expect(sum).toBeGreaterThan(980);
    expect(sum).toBeLessThan(1020);
    expect(Math.sqrt(m2 / sum)).toBeGreaterThan(2.6);
    expect(Math.sqrt(m2 / sum)).toBeLessThan(3.4);
  });
});

describe('blurSigma', () => {
  it('reads a sharp image as nearly sharp and known blurs in order, within 30%', () => {
    const sharp = blurSigma(board, W, H, all);
    expect(sharp).toBeLessThan(0.8);
    let last = sharp;
    for (const s of [1, 2, 3]) {
      const got = blurSigma(gaussianBlur(board, W, H, s), W, H, all);
      expect(got).toBeGreaterThan(last);
      expect(got).toBeGreaterThan(0.7 * s);
      expect(got).toBeLessThan(1.3 * s);
      last = got;
    }
  });
});
