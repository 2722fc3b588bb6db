// A product photo's outline stroke converges at a narrow notch (a T-shirt's armpit) into a wedge
// that the garment mask's closing seals inside the mask; a short sleeve samples the whole garment,
// and the wedge was a dark V on it. The colours the warp samples (garmentSamples) near each
// armpit must be the cloth's, not the outline's: the project's own T-shirt drawing, whose armpits
// (the SVG's path corners at (95, 140) and (305, 140)) and stroke colour (#7a0f16) are known from
// the drawing, not from the pipeline.
import { describe, expect, it } from 'vitest';
import { decodeImage } from '../../src/imaging/image.ts';
import { garmentSamples, productMask } from '../../src/pipelines/tryon/garment.ts';
import { GARMENT_COLORS, tshirt } from '../helpers/garments.ts';

const STROKE = [0x7a, 0x0f, 0x16];
const dist = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);

describe('garment samples at a narrow notch', () => {
  it("the T-shirt's armpits sample the cloth, not the outline's converging strokes", async () => {
    const image = await decodeImage(await tshirt(), { maxPixels: 4e6 });
    const { mask, sealed } = productMask(image);
    const { core, source } = garmentSamples({ image, mask, sealed });
    const W = image.width;
    for (const [ax, ay] of [[95, 140], [305, 140]] as const) {
      let strokeLike = 0, cloth = 0, n = 0;
      // The wedge above each armpit's corner, inside the core (what a sleeve's alpha covers).
      for (let y = ay - 24; y <= ay + 4; y++) {
        for (let x = ax - 12; x <= ax + 12; x++) {
          const i = y * W + x;
          if (!core[i]) continue;
          n++;
          const c = source.data.subarray(3 * i, 3 * i + 3);
          // Nearer the stroke than either cloth colour.
          if (dist(c, STROKE) < Math.min(dist(c, GARMENT_COLORS.shirt.main), dist(c, GARMENT_COLORS.shirt.second))) strokeLike++;
          else cloth++;
        }
      }
      expect(n, `core pixels near (${ax}, ${ay})`).toBeGreaterThan(200);
      expect(strokeLike, `stroke-coloured core pixels near the armpit (${ax}, ${ay}) of ${n}`).toBe(0);
      expect(cloth).toBe(n);
    }
  });
});
