// The hairstyle removal's body outline below the chin (src/pipelines/hairstyle/hair.ts bodyFlare):
// how far the body reaches past the neck's side, in face widths, at a depth below the chin. The
// neck keeps its width at the chin, the corner into the shoulders is rounded (not the right angle
// of a straight column on a straight line), and far out it follows the shoulders' slope.
import { describe, expect, it } from 'vitest';
import { bodyFlare } from '../../src/pipelines/hairstyle/hair.ts';

describe('bodyFlare', () => {
  it('is 0 at the chin and above it', () => {
    expect(bodyFlare(0)).toBe(0);
    expect(bodyFlare(-0.2)).toBe(0);
  });

  it('grows with the depth, without a step', () => {
    let last = 0;
    for (let dy = 0.01; dy <= 2; dy += 0.01) {
      const f = bodyFlare(dy);
      expect(f).toBeGreaterThan(last);
      expect(f - last).toBeLessThan(0.03); // at most the shoulders' slope (2 per face width) x 0.01, plus rounding
      last = f;
    }
  });

  it('rounds the corner where the neck meets the shoulders', () => {
    // The straight model reached 0 at 0.3 below the chin and only then turned outwards.
    expect(bodyFlare(0.3)).toBeGreaterThan(0.08);
    expect(bodyFlare(0.15)).toBeLessThan(0.05);
  });

  it('follows the shoulders line far out, just inside it', () => {
    for (const dy of [1, 1.5, 2]) {
      const line = (dy - 0.3) / 0.5;
      expect(bodyFlare(dy)).toBeLessThan(line);
      expect(bodyFlare(dy)).toBeGreaterThan(line - 0.05);
    }
  });
});
