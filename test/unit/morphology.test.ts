// Binary morphology against an independent judge: libvips' morph through sharp (whose erode grows
// a white foreground and whose dilate shrinks it) and a brute-force window scan.
// Colour bleeding past a mask (a warp's source) against hand-computed pixels.
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { close, closeInBox, dilate, erode } from '../../src/imaging/morphology.ts';
import { bleedColours } from '../../src/imaging/image.ts';

function randomMask(W: number, H: number, seed: number): Uint8Array {
  const m = new Uint8Array(W * H);
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const dx = (x - W / 2) / (W / 3), dy = (y - H / 2) / (H / 2.5);
      m[y * W + x] = dx * dx + dy * dy < 1 ? 1 : 0;
    }
  }
  for (let i = 0; i < (W * H) / 50; i++) m[Math.floor(rnd() * W * H)]! ^= 1;
  return m;
}

function bruteForce(m: Uint8Array, W: number, H: number, r: number, pick: 0 | 1): Uint8Array {
  const out = new Uint8Array(m.length).fill(1 - pick);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      search: for (let v = Math.max(0, y - r); v <= Math.min(H - 1, y + r); v++) {
        for (let u = Math.max(0, x - r); u <= Math.min(W - 1, x + r); u++) {
          if (m[v * W + u] === pick) {
            out[y * W + x] = pick;
            break search;
          }
        }
      }
    }
  }
  return out;
}

async function bySharp(m: Uint8Array, W: number, H: number, r: number, op: 'grow' | 'shrink'): Promise<Uint8Array> {
  const img = sharp(Uint8Array.from(m, (v) => v * 255), { raw: { width: W, height: H, channels: 1 } });
  const data = await (op === 'grow' ? img.erode(r) : img.dilate(r)).toColourspace('b-w').raw().toBuffer();
  return Uint8Array.from(data, (v) => (v > 127 ? 1 : 0));
}

describe('binary morphology', () => {
  it.each([
    [97, 61, 1],
    [97, 61, 4],
    [200, 150, 12],
    [30, 40, 25], // radius larger than the mask
  ])('%ix%i radius %i equals sharp and a brute-force scan', async (W, H, r) => {
    const m = randomMask(W, H, W * H + r);
    const grown = dilate(m, W, H, r);
    const shrunk = erode(m, W, H, r);
    expect(grown).toEqual(await bySharp(m, W, H, r, 'grow'));
    expect(shrunk).toEqual(await bySharp(m, W, H, r, 'shrink'));
    expect(grown).toEqual(bruteForce(m, W, H, r, 1));
    expect(shrunk).toEqual(bruteForce(m, W, H, r, 0));
  });

  // morph works on the box of the mask's set pixels grown by r: masks that fill part of the frame,
  // touch an edge, hold nothing, or hold other values than 0/1 must come out as over the frame.
  function blob(W: number, H: number, box: [number, number, number, number], seed: number, value = 1): Uint8Array {
    const m = new Uint8Array(W * H);
    let s = seed;
    const rnd = () => ((s = (s * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    const [x0, y0, x1, y1] = box;
    for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) if (rnd() < 0.8) m[y * W + x] = value;
    return m;
  }
  it.each([
    ['inside', [40, 30, 70, 55], 3],
    ['inside, radius past the edge', [5, 6, 20, 12], 9],
    ['touching the left and top edges', [0, 0, 25, 18], 4],
    ['touching the right and bottom edges', [80, 60, 119, 89], 2],
    ['one pixel', [60, 45, 60, 45], 5],
  ] as Array<[string, [number, number, number, number], number]>)('a mask in part of the frame (%s) equals a brute-force scan', (_, box, r) => {
    const W = 120, H = 90;
    const m = blob(W, H, box, box[0] * 7 + r);
    expect(dilate(m, W, H, r)).toEqual(bruteForce(m, W, H, r, 1));
    expect(erode(m, W, H, r)).toEqual(bruteForce(m, W, H, r, 0));
    const closed = erode(dilate(m, W, H, r), W, H, r);
    expect(closed).toEqual(bruteForce(bruteForce(m, W, H, r, 1), W, H, r, 0));
  });
  it('an empty mask and a mask of other values than 0/1 equal a brute-force scan', () => {
    const W = 50, H = 40;
    const empty = new Uint8Array(W * H);
    expect(dilate(empty, W, H, 3)).toEqual(bruteForce(empty, W, H, 3, 1));
    expect(erode(empty, W, H, 3)).toEqual(bruteForce(empty, W, H, 3, 0));
    const m = blob(W, H, [10, 8, 30, 25], 5, 255);
    m[20 * W + 20] = 1;
    expect(dilate(m, W, H, 2)).toEqual(bruteForce(m, W, H, 2, 1));
    expect(erode(m, W, H, 2)).toEqual(bruteForce(m, W, H, 2, 0));
  });
});

describe('bleedColours', () => {
  it('carries the inside colours outward ring by ring, and leaves pixels farther out as they were', () => {
    // A 9x3 strip: red inside (x 0..2), a white fringe and background beyond.
    const W = 9, H = 3;
    const data = new Uint8Array(W * H * 3).fill(255);
    const inside = new Uint8Array(W * H);
    for (let y = 0; y < H; y++) for (let x = 0; x < 3; x++) (inside[y * W + x] = 1), data.set([200, 20, 30], 3 * (y * W + x));
    const out = bleedColours({ data, width: W, height: H }, inside, 3);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const px = [...out.data.subarray(3 * (y * W + x), 3 * (y * W + x) + 3)];
        expect(px, `(${x}, ${y})`).toEqual(x < 6 ? [200, 20, 30] : [255, 255, 255]);
      }
    }
    // The input is not written.
    expect([...data.subarray(3 * 4, 3 * 5)]).toEqual([255, 255, 255]);
  });

  it('runs stripes that end at a straight outline on straight (no tapering, saw-toothed ends)', () => {
    // Horizontal stripes, 3 rows red and 3 rows white, inside x < 10; grey background beyond.
    const W = 24, H = 30;
    const data = new Uint8Array(W * H * 3).fill(128);
    const inside = new Uint8Array(W * H);
    const stripe = (y: number) => (Math.floor(y / 3) % 2 ? [250, 250, 250] : [200, 20, 30]);
    for (let y = 0; y < H; y++) for (let x = 0; x < 10; x++) (inside[y * W + x] = 1), data.set(stripe(y), 3 * (y * W + x));
    const out = bleedColours({ data, width: W, height: H }, inside, 8);
    for (let y = 0; y < H; y++) {
      for (let x = 10; x < 18; x++) expect([...out.data.subarray(3 * (y * W + x), 3 * (y * W + x) + 3)], `(${x}, ${y})`).toEqual(stripe(y));
    }
  });

  it('takes a diagonal neighbour where no 4-neighbour is coloured (round a corner)', () => {
    const W = 3, H = 3;
    const data = new Uint8Array(W * H * 3).fill(0);
    data.set([90, 60, 30], 0);
    const inside = new Uint8Array(W * H);
    inside[0] = 1;
    const out = bleedColours({ data, width: W, height: H }, inside, 1);
    // (1, 1) touches (0, 0) only diagonally.
    expect([...out.data.subarray(3 * 4, 3 * 5)]).toEqual([90, 60, 30]);
  });

  it('averages the coloured neighbours where two colours meet', () => {
    const W = 3, H = 1;
    const data = new Uint8Array([0, 0, 0, 9, 9, 9, 100, 200, 50]);
    const out = bleedColours({ data, width: W, height: H }, new Uint8Array([1, 0, 1]), 1);
    expect([...out.data.subarray(3, 6)]).toEqual([50, 100, 25]);
  });
});

describe('closeInBox', () => {
  it('closes two regions far apart each on its own box as close() does on the whole mask, and leaves the rest', () => {
    const W = 120, H = 60;
    const mask = new Uint8Array(W * H);
    // Two blobs with pinholes and a 2-pixel slit, 60 pixels apart; and a speck outside both boxes.
    for (const x0 of [10, 70]) {
      for (let y = 20; y < 40; y++) for (let x = x0; x < x0 + 20; x++) mask[y * W + x] = 1;
      mask[30 * W + x0 + 5] = 0;
      for (let y = 22; y < 38; y++) (mask[y * W + x0 + 10] = 0), (mask[y * W + x0 + 11] = 0);
    }
    const whole = close(mask, W, H, 2);
    const boxed = Uint8Array.from(mask);
    closeInBox(boxed, W, { x: 5, y: 15, width: 30, height: 30 }, 2);
    closeInBox(boxed, W, { x: 65, y: 15, width: 30, height: 30 }, 2);
    expect([...boxed]).toEqual([...whole]);
    // The slit and the pinhole were closed.
    expect(boxed[30 * W + 15]).toBe(1);
    expect(boxed[30 * W + 80]).toBe(1);
    // Outside the boxes nothing changes: a slit there stays open.
    const other = Uint8Array.from(mask);
    closeInBox(other, W, { x: 5, y: 15, width: 30, height: 30 }, 2);
    expect(other[30 * W + 80]).toBe(0);
  });
});
