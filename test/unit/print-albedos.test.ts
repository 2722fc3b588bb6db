// compose.ts: the photo's light carried onto the garment, told apart from the old clothing's
// two-tone print (printAlbedos). Synthetic photos: the light and the print are known exactly.
import { describe, expect, it } from 'vitest';
import { printAlbedos, shadeAndBlend, type GarmentLayer } from '../../src/pipelines/tryon/compose.ts';
import type { RgbImage } from '../../src/imaging/image.ts';

const N = 240;

/** A grey photo: luminance `lum(x, y)`. */
function photo(lum: (x: number, y: number) => number): RgbImage {
  const data = new Uint8Array(N * N * 3);
  for (let y = 0; y < N; y++) for (let x = 0; x < N; x++) data.fill(Math.round(lum(x, y)), 3 * (y * N + x), 3 * (y * N + x) + 3);
  return { data, width: N, height: N };
}

/** A plain mid-grey garment over the whole photo. */
function plainLayer(): GarmentLayer {
  return { alpha: new Float32Array(N * N).fill(1), rgb: new Float32Array(N * N * 3).fill(0.5) };
}

/** Vertical bands of period 16: black (30) on `dark` of them, white (220) on the rest. */
const bands = (x: number, dark: number) => (x % 16 < dark ? 30 : 220);

/** The output's mean luminance over the columns x0..x1 (rows 60..180: off the top and bottom edges). */
function meanOver(img: RgbImage, x0: number, x1: number): number {
  let s = 0, n = 0;
  for (let y = 60; y < 180; y++) for (let x = x0; x < x1; x++) (s += img.data[3 * (y * N + x)]!), n++;
  return s / n;
}

describe('printAlbedos', () => {
  const box = { x0: 0, y0: 0, x1: N - 1, y1: N - 1 };
  it('finds the two albedos of a black-and-white print, under a light that varies', () => {
    const p = printAlbedos(photo((x, y) => bands(x, 8) * (0.7 + (0.3 * y) / N)), plainLayer().alpha, box);
    expect(p).not.toBeNull();
    expect(p!.light / p!.dark).toBeGreaterThan(4);
  });

  it('takes a plain cloth lit from one side, dark to light, for one albedo', () => {
    expect(printAlbedos(photo((x) => 50 + (170 * x) / N), plainLayer().alpha, box)).toBeNull();
  });
});

describe('shadeAndBlend over a printed old garment', () => {
  it("does not paint where the old print's black bands are dense darker than where they are sparse, under an even light", () => {
    // The left half mostly black (12 of 16 columns), the right mostly white (4 of 16): the same
    // light on both. Before stop 38 the garment was 35% darker over the dense black (0.65).
    const img = photo((x) => bands(x, x < N / 2 ? 12 : 4));
    const out = shadeAndBlend(img, img, plainLayer(), 400);
    const left = meanOver(out, 20, 100), right = meanOver(out, 140, 220);
    expect(left / right).toBeGreaterThan(0.95);
    expect(left / right).toBeLessThan(1.05);
  });

  it('still carries the light: a plain cloth lit from the right gives a garment brighter on the right', () => {
    const img = photo((x) => 60 + (150 * x) / N);
    const out = shadeAndBlend(img, img, plainLayer(), 400);
    expect(meanOver(out, 140, 220) / meanOver(out, 20, 100)).toBeGreaterThan(1.15);
  });
});
