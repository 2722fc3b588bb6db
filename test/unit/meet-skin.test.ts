// A skin fill meets the photo's own skin beside it without a seam (src/pipelines/hairstyle/render.ts
// meetSkin), on a synthetic picture: lit skin on the left half, the hole on the right half filled a
// shade darker (as evenTone's tone from a shaded face left a filled shoulder). At the seam the
// fill takes the lit skin's lightness; past the offset's reach it keeps its own; beside brown
// wisps of hair (skin-like in chroma, far darker than the face) it is not darkened; nothing off
// the part changes, and the photo it reads is left as it was.
import { describe, expect, it } from 'vitest';
import { meetSkin } from '../../src/pipelines/hairstyle/removal.ts';
import { labAt } from '../../src/steps/color.ts';

const W = 200, H = 200;
const frame = { ox: 100, oy: 100, ux: 1, uy: 0, scale: 100 };
const LIT = [220, 170, 130], FILL = [180, 130, 100], WISPS = [90, 60, 40];

function scene() {
  const photo = new Uint8Array(W * H * 3), filled = new Uint8Array(W * H * 3);
  const hole = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const i = y * W + x;
      // Left: lit skin above row 120, brown wisps (not the parser's hair) below; right: the hole.
      const c = x >= 100 ? FILL : y < 120 ? LIT : WISPS;
      if (x >= 100) hole[i] = 1;
      for (let k = 0; k < 3; k++) photo[3 * i + k] = filled[3 * i + k] = c[k]!;
    }
  }
  const an = { image: { width: W, height: H, data: photo }, frame, others: new Uint8Array(W * H), hair: new Uint8Array(W * H), skin: [200, 150, 120] as const };
  return { an, img: { width: W, height: H, data: filled }, hole };
}

const L = (d: Uint8Array, x: number, y: number) => labAt(d, y * W + x)[0];

describe('a skin fill meets the skin beside it', () => {
  it('takes the lit skin lightness at the seam, keeps its own past the reach, is not darkened by wisps, changes only the part', () => {
    const { an, img, hole } = scene();
    const before = Uint8Array.from(img.data), photo = Uint8Array.from(an.image.data);
    const part = Uint8Array.from(hole);
    meetSkin(an, img, part, hole);
    const lit = L(an.image.data, 50, 50), fill = L(before, 150, 50);
    expect(lit - fill).toBeGreaterThan(8);
    // At the seam (mid-height of the lit rows, away from the wisps' rows): within 3 of the lit skin.
    expect(Math.abs(L(img.data, 100, 50) - lit)).toBeLessThan(3);
    // Past the reach (three times MEET_REACH, 0.24 face widths = 24 px here): the fill's own lightness.
    expect(Math.abs(L(img.data, 130, 50) - fill)).toBeLessThan(0.5);
    // Beside the wisps (rows 150 and more): never darker than the fill was.
    for (let y = 150; y < H; y += 10) expect(L(img.data, 100, y)).toBeGreaterThanOrEqual(fill - 0.5);
    // Off the part (the left half of every row): unchanged; the photo it reads: unchanged.
    const left = (d: Uint8Array) => Array.from({ length: H }, (_, y) => Buffer.from(d.subarray(3 * y * W, 3 * (y * W + 100))).toString('hex')).join('');
    expect(left(img.data)).toBe(left(before));
    expect(Buffer.from(an.image.data).equals(Buffer.from(photo))).toBe(true);
  });
});
