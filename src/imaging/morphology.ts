// Binary morphology on 0/1 masks (pure JS: small masks, no library round trip).

/** Square dilation (value 1) or erosion (value 0) by radius r, separable: rows, then columns. */
function morph(mask: Uint8Array, W: number, H: number, r: number, pick: 0 | 1): Uint8Array {
  const tmp = new Uint8Array(mask.length);
  const out = new Uint8Array(mask.length);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let v = 1 - pick;
      for (let k = Math.max(0, x - r); k <= Math.min(W - 1, x + r); k++) if (mask[y * W + k] === pick) { v = pick; break; }
      tmp[y * W + x] = v;
    }
  }
  for (let x = 0; x < W; x++) {
    for (let y = 0; y < H; y++) {
      let v = 1 - pick;
      for (let k = Math.max(0, y - r); k <= Math.min(H - 1, y + r); k++) if (tmp[k * W + x] === pick) { v = pick; break; }
      out[y * W + x] = v;
    }
  }
  return out;
}

export const dilate = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => morph(mask, W, H, r, 1);
export const erode = (mask: Uint8Array, W: number, H: number, r: number): Uint8Array => morph(mask, W, H, r, 0);
