// Box geometry shared by the detection steps: one intersection-over-union for every detector.

/** An axis-aligned box in pixels (or any unit), top-left corner and size. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export function boxIou(a: Box, b: Box): number {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  const inter = Math.max(0, x1 - x0) * Math.max(0, y1 - y0);
  const union = a.width * a.height + b.width * b.height - inter;
  return union > 0 ? inter / union : 0;
}
