// The JS resampler (src/imaging/resample.ts) against sharp's (cropSquare, placeMask: libvips, an
// independent implementation) on a real photo and on masks, and on cases with a known answer.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { cropSquare, decodeImage, letterboxGeometry, letterboxRgb, placeMask } from '../../src/imaging/image.ts';
import { letterboxResampled, placeMaskResampled, resampleSquare } from '../../src/imaging/resample.ts';

const mad = (a: Uint8Array, b: Uint8Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += Math.abs(a[i]! - b[i]!);
  return s / a.length;
};

describe('JS resampling', () => {
  it("crops and reduces a photo as sharp does (reductions of 1.2x to 3.8x, squares past the photo's edges)", async () => {
    const img = await decodeImage(fs.readFileSync('test/fixtures/group-four.jpg'), { maxPixels: 4e7 });
    for (const [x, y, side, size] of [
      [100, 50, 700, 256],
      [-60, -40, 300, 256],
      [600, 300, 460, 384],
      [300, 200, 980, 256],
    ] as const) {
      const js = resampleSquare(img, x, y, side, size);
      expect(js.length).toBe(size * size * 3);
      expect(mad(js, await cropSquare(img, x, y, side, size))).toBeLessThan(2);
    }
  });

  it('letterboxes a photo as sharp does, with the same black bars', async () => {
    const img = await decodeImage(fs.readFileSync('test/fixtures/person-standing.jpg'), { maxPixels: 4e7 });
    const g = letterboxGeometry(img.width, img.height, 256);
    const js = letterboxResampled(img, g);
    expect(mad(js, (await letterboxRgb(img, 256)).bytes)).toBeLessThan(2);
    // The bars: the first and last columns left and right of the picture are black.
    expect(g.padX).toBeGreaterThan(10);
    for (let y = 0; y < 256; y++) expect(js[3 * (y * 256 + g.padX - 1)]! + js[3 * (y * 256 + 256 - g.padX)]!).toBe(0);
  });

  it('enlarges a mask bilinearly as sharp does and places only what falls on the canvas', async () => {
    // A soft disc: an edge six pixels wide.
    const mask = new Uint8Array(256 * 256);
    for (let i = 0; i < mask.length; i++) mask[i] = Math.round(255 * Math.min(1, Math.max(0, (90 - Math.hypot((i % 256) - 128, (i >> 8) - 128)) / 6)));
    const canvas = { width: 700, height: 900, left: -150, top: 120 };
    const js = placeMaskResampled(mask, 256, 256, 1000, 1000, canvas);
    expect(mad(js, await placeMask(mask, 256, 256, 1000, 1000, 0, canvas))).toBeLessThan(0.5);
    // Nothing above the placed square.
    expect(js.subarray(0, 120 * 700).every((v) => v === 0)).toBe(true);
  });

  it('keeps flat areas exact and repeats the edge pixels past the image', () => {
    const W = 40, H = 30;
    const data = new Uint8Array(W * H * 3);
    // Left half red, right half blue.
    for (let i = 0; i < W * H; i++) data.set((i % W) < W / 2 ? [200, 10, 10] : [10, 10, 200], 3 * i);
    // A square left of the image, reduced 2x: all red (the left column repeated), exactly.
    const out = resampleSquare({ data, width: W, height: H }, -30, 5, 20, 10);
    for (let i = 0; i < 100; i++) expect([...out.subarray(3 * i, 3 * i + 3)]).toEqual([200, 10, 10]);
    // Across the boundary at x = 20, reduced 2x: output pixel 4 averages source columns 18-19
    // (red), pixel 5 columns 20-21 (blue), no blending between them.
    const row = resampleSquare({ data, width: W, height: H }, 10, 0, 20, 10);
    expect([...row.subarray(12, 15)]).toEqual([200, 10, 10]);
    expect([...row.subarray(15, 18)]).toEqual([10, 10, 200]);
  });
});
