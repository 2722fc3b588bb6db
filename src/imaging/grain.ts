// Seeded noise for film grain laid over drawn or synthesised pixels (the hairstyle's new hair and
// its skin fill): deterministic per seed, so a retried job draws the same picture.

/**
 * A generator of bell-shaped noise in about -1..1 (standard deviation ~0.41): two xorshift32 draws
 * summed, less 1. Cheap enough to call once per pixel. The state starts at `seed` (as an unsigned
 * 32-bit integer; 0 yields -1 forever, so callers pass a non-zero seed).
 */
export function bellNoise(seed: number): () => number {
  let h = seed >>> 0;
  return () => {
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    const a = (h >>> 0) / 4294967296;
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    return a + (h >>> 0) / 4294967296 - 1;
  };
}
