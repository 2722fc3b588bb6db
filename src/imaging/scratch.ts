// Reusable full-frame float planes for per-picture work (the hairstyle layer's six planes: 24 MB
// a picture at 1 MP). Memory fresh from the allocator is zero pages the kernel maps on first
// touch; on this project's 2-core machines that first touch cost ~11 ms per 4 MB plane (measured:
// filling a new Float32Array(1e6) 11 ms, filling it again 0.1 ms), more than the rendering that
// writes it. A plane given back is handed out again, zeroed, to the next picture of this thread
// (pipelines run in inference threads; each has its own pool). Bounded: at most MAX_PLANES planes
// and MAX_BYTES kept; planes under MIN_LENGTH are not pooled (allocating them is cheap).
const MAX_PLANES = 12;
const MAX_BYTES = 256 * 2 ** 20;
const MIN_LENGTH = 1 << 16;

const free: Float32Array[] = [];
let kept = 0;

/** A zeroed Float32Array of `length`: a pooled one when a plane of that length was given back. */
export function takePlane(length: number): Float32Array {
  const k = free.findIndex((p) => p.length === length);
  if (k < 0) return new Float32Array(length);
  const plane = free.splice(k, 1)[0]!;
  kept -= plane.byteLength;
  return plane.fill(0);
}

/**
 * Gives planes back for reuse; the caller must not touch them afterwards. Planes past the pool's
 * bounds are dropped (left to the garbage collector), the oldest first.
 */
export function givePlanes(...planes: Float32Array[]): void {
  for (const p of planes) {
    if (p.length < MIN_LENGTH || free.includes(p)) continue;
    free.push(p);
    kept += p.byteLength;
  }
  while (free.length > MAX_PLANES || kept > MAX_BYTES) kept -= free.shift()!.byteLength;
}
