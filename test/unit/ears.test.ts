// The ears drawn where the old hair hid them (src/pipelines/hairstyle/ears.ts), on a synthetic
// head: a frame of 200 px per face width centred in a grey picture, the old hair over one side's
// ear zone only. An ear is drawn on the hidden side alone, only on the removal's hole (never on
// the face, on other people or outside the hole), in the skin's colour, with a lit rim and a
// darker bowl; a head turned far enough hides its far ear.
import { describe, expect, it } from 'vitest';
import type { Anchors, Frame } from '../../src/pipelines/hairstyle/frame.ts';
import { frameU, frameV } from '../../src/pipelines/hairstyle/frame.ts';
import { drawEars } from '../../src/pipelines/hairstyle/ears.ts';

const W = 400, H = 400;
const frame: Frame = { ox: 200, oy: 200, ux: 1, uy: 0, scale: 200 };
const anchors = (turn = 0): Anchors => ({ forehead: -0.45, midline: 0, brows: -0.15, ears: 0.1, chin: 0.75, halfWidth: 0.5, turn, ovalHalfWidth: (v) => (v < 0.1 ? 0.5 : Math.max(0.1, 0.5 - 0.55 * (v - 0.1))) });
const look = { edgeBlur: 1, grain: 0, lightSide: 0, monochrome: false };
const SKIN = [200, 150, 120] as const;

/** The synthetic head: hair (and the hole) over |u| in 0.45..0.8 on the hidden sides, v -0.4..0.5. */
function head(hiddenSides: number[], turn = 0) {
  const hair = new Uint8Array(W * H), hole = new Uint8Array(W * H), protect = new Uint8Array(W * H), others = new Uint8Array(W * H);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const u = frameU(frame, x + 0.5, y + 0.5), v = frameV(frame, x + 0.5, y + 0.5);
      if (Math.abs(u) < 0.45 && v > -0.15 && v < 0.7) protect[y * W + x] = 1;
      if (Math.abs(u) >= 0.45 && Math.abs(u) < 0.8 && v > -0.4 && v < 0.5 && hiddenSides.includes(Math.sign(u))) hair[y * W + x] = hole[y * W + x] = 255;
    }
  }
  const data = new Uint8Array(W * H * 3).fill(90);
  return { an: { frame, anchors: anchors(turn), protect, others, hair, skin: SKIN }, img: { width: W, height: H, data }, hole };
}

/** Changed pixels on each side (u < 0, u > 0), and where they lie. */
function changes(img: { data: Uint8Array }, hole: Uint8Array, protect: Uint8Array) {
  const side = [0, 0];
  let offHole = 0, onFace = 0;
  for (let i = 0; i < W * H; i++) {
    if (img.data[3 * i] === 90 && img.data[3 * i + 1] === 90 && img.data[3 * i + 2] === 90) continue;
    const x = i % W, y = (i - x) / W;
    side[frameU(frame, x + 0.5, y + 0.5) < 0 ? 0 : 1]!++;
    if (!hole[i]) offHole++;
    if (protect[i]) onFace++;
  }
  return { left: side[0]!, right: side[1]!, offHole, onFace };
}

describe('ears where the old hair hid them', () => {
  it('draws an ear on the side the hair hid and none on the side that shows its own', () => {
    const { an, img, hole } = head([-1]);
    expect(drawEars(an, img, hole, look, 3)).toBe(1);
    const c = changes(img, hole, an.protect);
    // An ear 0.37 face widths tall standing out ~0.13: about 0.03 face widths squared (1200 px here).
    expect(c.left).toBeGreaterThan(600);
    expect(c.right).toBe(0);
    expect(c.offHole).toBe(0);
    expect(c.onFace).toBe(0);
  });

  it('draws it in the skin colour, with a lit rim beside a darker bowl', () => {
    const { an, img, hole } = head([-1, 1]);
    expect(drawEars(an, img, hole, look, 3)).toBe(2);
    // Along the ear's middle height (v = ears), from the face out to the rim.
    const y = 200 + Math.round(0.1 * 200);
    const at = (u: number) => {
      const x = Math.round(200 + u * 200);
      return img.data.slice(3 * (y * W + x), 3 * (y * W + x) + 3);
    };
    const rim = at(-0.5 - 0.13 * 0.8), bowl = at(-0.5 - 0.13 * 0.4);
    // Skin-coloured: red over green over blue, as the face's.
    expect(rim[0]!).toBeGreaterThan(rim[1]!);
    expect(rim[1]!).toBeGreaterThan(rim[2]!);
    expect(rim[0]!).toBeGreaterThan(bowl[0]! + 10);
  });

  it("takes the tone of the cheek on its side: a shaded cheek's ear is darker than a lit one's", () => {
    const { an, img, hole } = head([-1, 1]);
    // The face in the skin's colour, its image-left half in shade (70%).
    for (let i = 0; i < W * H; i++) {
      if (!an.protect[i]) continue;
      const x = i % W, k = x < 200 ? 0.7 : 1;
      for (let c = 0; c < 3; c++) img.data[3 * i + c] = Math.round(SKIN[c]! * k);
    }
    drawEars(an, img, hole, look, 3);
    const y = 200 + Math.round(0.1 * 200);
    const left = img.data[3 * (y * W + Math.round(200 - (0.5 + 0.13 * 0.8) * 200))]!;
    const right = img.data[3 * (y * W + Math.round(200 + (0.5 + 0.13 * 0.8) * 200))]!;
    expect(left).toBeLessThan(0.85 * right);
    expect(right).toBeGreaterThan(SKIN[0] * 0.9);
  });

  it('hides the far ear of a head turned 30 degrees and draws the near one', () => {
    // turn > 0: the image-right cheek is the farther one.
    const { an, img, hole } = head([-1, 1], Math.sin(Math.PI / 6));
    expect(drawEars(an, img, hole, look, 3)).toBe(1);
    const c = changes(img, hole, an.protect);
    expect(c.left).toBeGreaterThan(600);
    expect(c.right).toBe(0);
  });

  it('leaves other people alone', () => {
    const { an, img, hole } = head([-1]);
    an.others.fill(1);
    drawEars(an, img, hole, look, 3);
    expect(changes(img, hole, an.protect).left).toBe(0);
  });
});
