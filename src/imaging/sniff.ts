// Content sniffing by magic bytes: the declared Content-Type and file name are never trusted.
//
// Kept beside sharp's metadata().format on purpose. For JPEG, PNG and WebP the two agree (libvips
// picks its loader by these same signatures; test/unit/sniff-and-config.test.ts checks it), but
// metadata() hands untrusted bytes to whichever libvips loader claims them first: librsvg (SVG is
// XML), libtiff, libheif, GIF ... This allowlist runs before any of them, synchronously, where an
// input arrives (API upload, worker download), and gives INPUT_NOT_IMAGE naming the first bytes.
// sharp.block() could restrict the loaders instead, but it is process-wide and would also refuse
// the SVG overlays that scripts and test helpers draw in the same process. The decoding itself
// (imaging/image.ts) then reads the header with sharp, and a corrupt one fails there.
export type ImageType = 'jpeg' | 'png' | 'webp';

export const IMAGE_MIME: Readonly<Record<ImageType, string>> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

export function sniffImageType(b: Uint8Array): ImageType | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (
    b.length >= 8 &&
    b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47 &&
    b[4] === 0x0d && b[5] === 0x0a && b[6] === 0x1a && b[7] === 0x0a
  ) return 'png';
  if (
    b.length >= 12 &&
    b[0] === 0x52 && b[1] === 0x49 && b[2] === 0x46 && b[3] === 0x46 && // RIFF
    b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50 // WEBP
  ) return 'webp';
  return null;
}
