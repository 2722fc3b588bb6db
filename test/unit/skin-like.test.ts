// steps/color.ts skinLike: the coarse YCbCr skin test the hairstyle uses to tell an undetected
// neighbour's face (mostly skin) from the target's own shoulder or clothes beside the head. Skin
// of light, medium and dark tones (sRGB values typical of each, in daylight and in shade) passes;
// the colours a shirt, a wall or the background beside a head often has do not.
import { describe, expect, it } from 'vitest';
import { skinLike } from '../../src/steps/color.ts';

type Rgb = [number, number, number];
const SKIN: Rgb[] = [[241, 194, 167], [224, 172, 138], [198, 134, 96], [161, 102, 70], [120, 75, 50], [88, 55, 38], [230, 190, 170]];
const NOT_SKIN: Rgb[] = [[170, 20, 50], [30, 50, 160], [40, 140, 60], [128, 128, 128], [245, 245, 245], [10, 8, 8], [200, 30, 30]];

describe('skinLike', () => {
  it('takes skin of light, medium and dark tones', () => {
    for (const [r, g, b] of SKIN) expect(skinLike(r, g, b), `${r},${g},${b}`).toBe(true);
  });
  it('refuses saturated red and blue shirts, green, grey, white and black', () => {
    for (const [r, g, b] of NOT_SKIN) expect(skinLike(r, g, b), `${r},${g},${b}`).toBe(false);
  });
});
