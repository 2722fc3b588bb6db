// Per-pixel mask arithmetic of the try-on (0/1 masks, Uint8Array, one byte a pixel), as small
// functions of their own. A loop over a 1 MP frame written inline in a long stage function
// (bodyParts, renderTryon) ran at baseline-compiler speed, ~30 ns a pixel: the function runs once
// a picture, and the loop ends before V8 has finished optimizing the whole function for it. These
// small functions are called many times a picture, get optimized early, and run at ~2 ns a pixel.
// (`Uint8Array.from(mask, (v, i) => ...)` was worse still: ~200 ns a pixel.)

/** a or b. */
export function union(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < out.length; i++) out[i] = a[i] || b[i] ? 1 : 0;
  return out;
}

/** a and b (bitwise, as `v & mask[i]`). */
export function intersect(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < out.length; i++) out[i] = a[i]! & b[i]!;
  return out;
}

/** a and not b (and not c). */
export function andNot(a: Uint8Array, b: Uint8Array, c?: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  if (c) for (let i = 0; i < out.length; i++) out[i] = a[i] && !b[i] && !c[i] ? 1 : 0;
  else for (let i = 0; i < out.length; i++) out[i] = a[i] && !b[i] ? 1 : 0;
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
