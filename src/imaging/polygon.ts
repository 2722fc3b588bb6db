// Polygon rasterization (even-odd scanline fill at pixel centres): 1 inside, 0 outside.
export function polygonMask(poly: ReadonlyArray<readonly [number, number]>, width: number, height: number): Uint8Array {
  const mask = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    const yc = y + 0.5;
    const xs: number[] = [];
    for (let i = 0; i < poly.length; i++) {
      const [x0, y0] = poly[i]!;
      const [x1, y1] = poly[(i + 1) % poly.length]!;
      if ((y0 <= yc && y1 > yc) || (y1 <= yc && y0 > yc)) xs.push(x0 + ((yc - y0) * (x1 - x0)) / (y1 - y0));
    }
    xs.sort((a, b) => a - b);
    for (let k = 0; k + 1 < xs.length; k += 2) {
      for (let x = Math.max(0, Math.ceil(xs[k]! - 0.5)); x < Math.min(width, Math.ceil(xs[k + 1]! - 0.5)); x++) mask[y * width + x] = 1;
    }
  }
  return mask;
}
