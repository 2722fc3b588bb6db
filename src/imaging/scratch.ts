// Reusable memory for per-picture planes: the hairstyle layer's six float planes (24 MB a picture
// at 1 MP) and the exemplar fill's copy of its region, its pyramid and its match field. Memory
// fresh from the allocator is zero pages the kernel maps on first touch; on this project's 2-core
// machines that first touch cost ~11 ms per 4 MB (measured: filling a new Float32Array(1e6)
// 11 ms, filling it again 0.1 ms), more than the work that writes it. A plane given back is kept,
// and its memory handed out again, zeroed, for the next plane of this thread that fits in it
// (pipelines run in inference threads; each has its own pool). Bounded: at most MAX_BUFFERS
// buffers and MAX_BYTES kept per thread (a 1 MP hairstyle picture uses ~45 MB; a larger photo's
// planes beyond the bound are left to the garbage collector); buffers under MIN_BYTES are not
// pooled (allocating them is cheap).
const MAX_BUFFERS = 16;
const MAX_BYTES = 128 * 2 ** 20;
const MIN_BYTES = 1 << 18;

const free: ArrayBuffer[] = [];
let kept = 0;

/**
 * A kept buffer for `bytes` (the smallest of those at least that large and at most twice, so a
 * small plane does not hold a large buffer), taken out of the pool; null when none fits.
 */
function take(bytes: number): ArrayBuffer | null {
  let k = -1;
  for (let j = 0; j < free.length; j++) {
    const b = free[j]!.byteLength;
    if (b >= bytes && b <= 2 * bytes && (k < 0 || b < free[k]!.byteLength)) k = j;
  }
  if (k < 0) return null;
  const buffer = free.splice(k, 1)[0]!;
  kept -= buffer.byteLength;
  return buffer;
}

/** A zeroed Float32Array of `length`, on a kept buffer when one fits, else new. */
export function takePlane(length: number): Float32Array {
  const buffer = take(4 * length);
  return buffer ? new Float32Array(buffer, 0, length).fill(0) : new Float32Array(length);
}

/** A zeroed Int32Array of `length`, on a kept buffer when one fits, else new. */
export function takeInts(length: number): Int32Array {
  const buffer = take(4 * length);
  return buffer ? new Int32Array(buffer, 0, length).fill(0) : new Int32Array(length);
}

/** A zeroed Uint8Array of `length` (a mask), on a kept buffer when one fits, else new. */
export function takeBytes(length: number): Uint8Array {
  const buffer = take(length);
  return buffer ? new Uint8Array(buffer, 0, length).fill(0) : new Uint8Array(length);
}

/**
 * Gives arrays' memory back for reuse: the caller must hold no other view of it and not touch the
 * arrays afterwards. Past the pool's bounds the oldest buffers are dropped (left to the garbage
 * collector).
 */
export function giveBack(...arrays: Array<Float32Array | Int32Array | Uint8Array>): void {
  for (const p of arrays) {
    const buffer = p.buffer as ArrayBuffer;
    if (buffer.byteLength < MIN_BYTES || free.includes(buffer)) continue;
    free.push(buffer);
    kept += buffer.byteLength;
  }
  while (free.length > MAX_BUFFERS || kept > MAX_BYTES) kept -= free.shift()!.byteLength;
}
