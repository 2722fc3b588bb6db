// Per-pixel mask arithmetic of the try-on (0/1 masks, Uint8Array, one byte a pixel), as small
// functions of their own. A loop over a 1 MP frame written inline in a long stage function
// (bodyParts, renderTryon) ran at baseline-compiler speed, ~30 ns a pixel: the function runs once
// a picture, and the loop ends before V8 has finished optimizing the whole function for it. These
// small functions are called many times a picture, get optimized early, and run at ~2 ns a pixel.
// (`Uint8Array.from(mask, (v, i) => ...)` was worse still: ~200 ns a pixel.)

// union, intersect and andNot work on four pixels at a time, as 32-bit words of the masks'
// bytes: exact for any byte values (nonZero tests each byte), a quarter of the loop's iterations.
const ONES = 0x01010101;

/** 1 in each byte of a 32-bit word that is not 0, else 0 (bit 0 of byte k ORs that byte's 8 bits). */
function nonZero(w: number): number {
  let t = w | (w >>> 4);
  t |= t >>> 2;
  t |= t >>> 1;
  return t & ONES;
}

/** 32-bit views of the masks (all aligned), or null (then the byte loops run). */
function words(...masks: Uint8Array[]): Uint32Array[] | null {
  if (masks.some((m) => m.byteOffset % 4 !== 0)) return null;
  return masks.map((m) => new Uint32Array(m.buffer, m.byteOffset, m.length >>> 2));
}

/** a or b. */
export function union(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  const w = words(out, a, b);
  let i = 0;
  if (w) {
    const [o, wa, wb] = w as [Uint32Array, Uint32Array, Uint32Array];
    for (let k = 0; k < o.length; k++) o[k] = nonZero(wa[k]! | wb[k]!);
    i = o.length * 4;
  }
  for (; i < out.length; i++) out[i] = a[i] || b[i] ? 1 : 0;
  return out;
}

/** a and b (bitwise, as `v & mask[i]`). */
export function intersect(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  const w = words(out, a, b);
  let i = 0;
  if (w) {
    const [o, wa, wb] = w as [Uint32Array, Uint32Array, Uint32Array];
    for (let k = 0; k < o.length; k++) o[k] = wa[k]! & wb[k]!;
    i = o.length * 4;
  }
  for (; i < out.length; i++) out[i] = a[i]! & b[i]!;
  return out;
}

/** a and not b (and not c). */
export function andNot(a: Uint8Array, b: Uint8Array, c?: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  const w = words(out, a, b, c ?? b);
  let i = 0;
  if (w) {
    const [o, wa, wb, wc] = w as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
    for (let k = 0; k < o.length; k++) o[k] = nonZero(wa[k]!) & ~nonZero(wb[k]! | wc[k]!);
    i = o.length * 4;
  }
  if (c) for (; i < out.length; i++) out[i] = a[i] && !b[i] && !c[i] ? 1 : 0;
  else for (; i < out.length; i++) out[i] = a[i] && !b[i] ? 1 : 0;
  return out;
}

/** How many pixels are set. */
export function area(mask: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i]!;
  return n;
}

/** 1 where a probability map (0..255) is above `level`. */
export function above(map: Uint8Array, level: number): Uint8Array {
  const out = new Uint8Array(map.length);
  for (let i = 0; i < out.length; i++) out[i] = map[i]! > level ? 1 : 0;
  return out;
}

/** 1 where a probability map (0..255) is at most `level`. */
export function notAbove(map: Uint8Array, level: number): Uint8Array {
  const out = new Uint8Array(map.length);
  for (let i = 0; i < out.length; i++) out[i] = map[i]! <= level ? 1 : 0;
  return out;
}
