// Output files shared by the pipelines: JSON results and encoded pictures.
import { encodeJpeg, encodePng, type RgbImage } from '../imaging/image.ts';
import type { OutputFile } from './types.ts';

export const jsonFile = (name: string, value: unknown): OutputFile => ({ name, contentType: 'application/json', data: Buffer.from(JSON.stringify(value, null, 2)) });

/** A result picture named `<base>.jpg` (JPEG at `quality`) or `<base>.png`. */
export async function pictureFile(base: string, image: RgbImage, format: 'jpeg' | 'png', quality: number): Promise<OutputFile> {
  return format === 'png'
    ? { name: `${base}.png`, contentType: 'image/png', data: await encodePng(image.data, image.width, image.height, 3) }
    : { name: `${base}.jpg`, contentType: 'image/jpeg', data: await encodeJpeg(image, quality) };
}

/** A one-channel mask as a PNG. */
export async function maskFile(name: string, mask: Uint8Array, width: number, height: number): Promise<OutputFile> {
  return { name, contentType: 'image/png', data: await encodePng(mask, width, height, 1) };
}
