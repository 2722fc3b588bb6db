// Tests' door to the development photos (scripts/lib/dev-photos.ts: face-api samples 5 and 6,
// fetched from the pinned npm tarball, cropped per person; samples 1-4 are never used).
export * from '../../scripts/lib/dev-photos.ts';
