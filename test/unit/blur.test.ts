// imaging/blur.ts: the almost-Gaussian blur (three boxes) and the blur estimate the hairstyle
// uses to soften drawn hair to the photo's focus. A synthetic image of vertical and horizontal
// step edges, blurred by known sigmas, reads back close to them, in order.
import { describe, expect, it } from 'vitest';
import { blurSigma, gaussianBlur, gaussianBlurInPlace, matchSharpness, type SharpnessFills } from '../../src/imaging/blur.ts';

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

describe('matchSharpness', () => {
  // An out-of-focus scene (the checkerboard blurred by 2.5 px, with a little noise, as RGB bytes),
  // and in its middle a "fill": the same board pasted sharp, with a seam of copied blocks.
  const scene = () => {
    const soft = gaussianBlur(board, W, H, 2.5);
    let h = 12345;
    const rnd = () => ((h = (h * 1103515245 + 12345) >>> 0), h / 4294967296 - 0.5);
    const data = new Uint8Array(3 * W * H);
    const part = new Uint8Array(W * H), reference = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = y * W + x;
        const inPart = x >= 30 && x < 66 && y >= 30 && y < 66;
        const v = inPart ? board[i]! : soft[i]! + 6 * rnd();
        for (let c = 0; c < 3; c++) data[3 * i + c] = Math.max(0, Math.min(255, Math.round(v)));
        if (inPart) part[i] = 1;
        else reference[i] = 1;
      }
    }
    return { img: { data, width: W, height: H }, part, reference, box: { x: 30, y: 30, width: 36, height: 36 } };
  };
  const greyOf = (d: Uint8Array) => Float32Array.from({ length: W * H }, (_, i) => d[3 * i]!);
  /** The one fill marked on the whole image: its part bit 1, its reference bit 0. */
  const marked = (part: Uint8Array, reference: Uint8Array, box: { x: number; y: number; width: number; height: number }): SharpnessFills => ({
    region: { x0: 0, y0: 0, x1: W, y1: H },
    bits: Uint8Array.from(part, (p, i) => (p ? 2 : reference[i] ? 1 : 0)),
    fills: [{ box: { x0: box.x, y0: box.y, x1: box.x + box.width, y1: box.y + box.height }, references: reference.reduce((a, b) => a + b, 0) }],
  });

  it('blurs a fill sharper than its surroundings to their focus, and changes nothing outside it', () => {
    const { img, part, reference, box } = scene();
    const before = Uint8Array.from(img.data);
    const inner = Uint8Array.from(part, (v, i) => (v && i % W > 32 && i % W < 63 && i / W > 32 && i / W < 63 ? 1 : 0));
    const sharp = blurSigma(greyOf(img.data), W, H, inner);
    const [applied] = matchSharpness(img, marked(part, reference, box), 12);
    const after = blurSigma(greyOf(img.data), W, H, inner);
    expect(sharp).toBeLessThan(0.8);
    expect(applied).toBeGreaterThan(1.5);
    // The fill's edges now about as soft as the scene's (2.5 px; the grain put back reads a little
    // sharper to the estimate).
    expect(after).toBeGreaterThan(1.5);
    expect(after).toBeLessThan(3.5);
    for (let i = 0; i < W * H; i++) if (!part[i]) expect(img.data[3 * i]).toBe(before[3 * i]);
  });

  it('puts the surroundings\' grain back on the blurred fill', () => {
    const { img, part, reference, box } = scene();
    matchSharpness(img, marked(part, reference, box), 12);
    // Inside a flat square of the fill (no edge): the noise's spread, against the scene's own.
    const spread = (x0: number, y0: number) => {
      const v: number[] = [];
      for (let y = y0; y < y0 + 8; y++) for (let x = x0; x < x0 + 8; x++) v.push(img.data[3 * (y * W + x)]!);
      const m = v.reduce((a, b) => a + b, 0) / v.length;
      return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / v.length);
    };
    expect(spread(36, 36)).toBeGreaterThan(0.8);
    expect(spread(36, 36)).toBeLessThan(4 * spread(4, 4) + 1);
  });

  it('leaves a fill as sharp as its surroundings alone', () => {
    const { img, part, reference, box } = scene();
    // A sharp scene: the board itself around the pasted board.
    for (let i = 0; i < W * H; i++) for (let c = 0; c < 3; c++) img.data[3 * i + c] = board[i]!;
    const before = Uint8Array.from(img.data);
    expect(matchSharpness(img, marked(part, reference, box), 12)).toEqual([0]);
    expect(img.data).toEqual(before);
  });
});
