import { describe, expect, it } from 'vitest';
import sharp from 'sharp';
import { sniffImageType } from '../../src/imaging/sniff.ts';
import { parseConfig } from '../../src/config/env.ts';

describe('magic-byte sniffing', () => {
  it('recognises real JPEG, PNG and WebP files and nothing else', async () => {
    const img = sharp({ create: { width: 4, height: 4, channels: 3, background: '#123' } });
    expect(sniffImageType(await img.clone().jpeg().toBuffer())).toBe('jpeg');
    expect(sniffImageType(await img.clone().png().toBuffer())).toBe('png');
    expect(sniffImageType(await img.clone().webp().toBuffer())).toBe('webp');
    expect(sniffImageType(await img.clone().gif().toBuffer())).toBeNull();
    expect(sniffImageType(Buffer.from('<html>'))).toBeNull();
    expect(sniffImageType(Buffer.from('RIFF\0\0\0\0WAVE'))).toBeNull();
    expect(sniffImageType(new Uint8Array(0))).toBeNull();
  });

  it('agrees with sharp on the accepted formats and stops what sharp would also open', async () => {
    const img = sharp({ create: { width: 4, height: 4, channels: 3, background: '#123' } });
    for (const format of ['jpeg', 'png', 'webp'] as const) {
      const bytes = await img.clone().toFormat(format).toBuffer();
      expect((await sharp(bytes).metadata()).format).toBe(format);
      expect(sniffImageType(bytes)).toBe(format);
    }
    // Formats libvips opens, through parsers this gate keeps untrusted bytes away from.
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>');
    for (const bytes of [await img.clone().gif().toBuffer(), await img.clone().tiff().toBuffer(), svg]) {
      expect((await sharp(bytes).metadata()).format).toBeTruthy();
      expect(sniffImageType(bytes)).toBeNull();
    }
  });
});

describe('config', () => {
  it('has documented defaults', () => {
    const c = parseConfig({});
    expect(c.port).toBe(8080);
    expect(c.executionProvider).toBe('cpu');
    expect(c.publicBaseUrl).toBe('http://127.0.0.1:8080');
    expect(c.input.maxBytes).toBe(20 * 1024 * 1024);
    expect(c.redisUrl).toBeUndefined();
    expect(c.inferenceHeapMb).toBe(128);
    expect(parseConfig({ INFERENCE_HEAP_MB: '0' }).inferenceHeapMb).toBe(0);
    expect(() => parseConfig({ INFERENCE_HEAP_MB: '-1' })).toThrow(/INFERENCE_HEAP_MB/);
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('fails fast naming every bad variable', () => {
    expect(() => parseConfig({ PORT: 'eighty', EXECUTION_PROVIDER: 'tpu' })).toThrow(/PORT:.*\n\s+EXECUTION_PROVIDER:/s);
  });

  it('BLOB_STORE=s3 needs S3_BUCKET; local by default', () => {
    expect(parseConfig({}).blobStore).toBe('local');
    expect(() => parseConfig({ BLOB_STORE: 's3' })).toThrow(/S3_BUCKET: required/);
    const c = parseConfig({ BLOB_STORE: 's3', S3_BUCKET: 'b', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_FORCE_PATH_STYLE: 'true' });
    expect(c.s3).toEqual({ bucket: 'b', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', forcePathStyle: true });
  });

  it('treats empty strings as unset', () => {
    expect(parseConfig({ REDIS_URL: '', PORT: '' }).port).toBe(8080);
  });
});
