// Reads a multipart/form-data body part by part (streamed by busboy), accepting at most `maxFiles`
// files of at most `maxFileBytes` each and small text fields. Files are never gathered in memory:
// each is handed, as a stream, to the caller's sink (the job routes write it to the blob store as
// it arrives). Anything out of bounds or malformed is a JOB_PARAMS_INVALID error saying why.
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { AppError } from '../errors/codes.ts';

export interface FilePart {
  field: string;
  filename: string;
  /** 1-based position of this file among its field's files. */
  n: number;
  /** The file's bytes; the sink must read it to its end (or throw). */
  stream: Readable;
  /** Once the stream has ended: the error for a file cut at maxFileBytes, else null. */
  tooLarge(): AppError | null;
}

export interface MultipartLimits {
  /** File fields accepted, with how many files each may carry. */
  fileFields: Readonly<Record<string, number>>;
  maxFileBytes: number;
  maxFieldBytes: number;
}

/** Form fields a body may carry besides its files (busboy's `fields` limit). */
export const MAX_TEXT_FIELDS = 32;

export interface MultipartBody<F> {
  fields: Map<string, string>;
  files: F[];
}

const params = (why: string) => new AppError('JOB_PARAMS_INVALID', why);

/** The largest body these limits admit (files, text fields and a generous allowance for part headers). */
export function maxMultipartBytes(limits: MultipartLimits): number {
  const files = Object.values(limits.fileFields).reduce((a, b) => a + b, 0);
  return files * limits.maxFileBytes + MAX_TEXT_FIELDS * limits.maxFieldBytes + (files + MAX_TEXT_FIELDS) * 1024;
}

export async function readMultipart<F>(req: FastifyRequest, limits: MultipartLimits, sink: (file: FilePart) => Promise<F>): Promise<MultipartBody<F>> {
  if (!req.isMultipart()) throw params('the body must be multipart/form-data');
  const fields = new Map<string, string>();
  const files: F[] = [];
  const counts = new Map<string, number>();
  const totalFiles = Object.values(limits.fileFields).reduce((a, b) => a + b, 0);
  try {
    const parts = req.parts({
      limits: {
        fileSize: limits.maxFileBytes,
        // One more than allowed, so "too many files" is ours to say, with the field's name.
        files: totalFiles + 1,
        fields: MAX_TEXT_FIELDS,
        fieldSize: limits.maxFieldBytes,
        parts: totalFiles + MAX_TEXT_FIELDS + 1,
      },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        const max = limits.fileFields[part.fieldname];
        if (max === undefined) {
          throw params(`unexpected file field "${part.fieldname}" (files go in ${Object.keys(limits.fileFields).join(' or ')})`);
        }
        const n = (counts.get(part.fieldname) ?? 0) + 1;
        counts.set(part.fieldname, n);
        if (n > max) throw params(`${part.fieldname}: at most ${max} file${max > 1 ? 's' : ''} allowed`);
        // busboy cuts a file at fileSize and ends its stream normally, flagging it.
        const tooLarge = () =>
          part.file.truncated ? params(`${part.fieldname}: file ${n} (${part.filename || 'unnamed'}) is larger than ${limits.maxFileBytes} bytes`) : null;
        files.push(await sink({ field: part.fieldname, filename: part.filename, n, stream: part.file, tooLarge }));
        const big = tooLarge();
        if (big) throw big;
      } else {
        if (part.valueTruncated) throw params(`${part.fieldname}: longer than ${limits.maxFieldBytes} bytes`);
        if (fields.has(part.fieldname)) throw params(`${part.fieldname}: given more than once`);
        // A part declared application/json arrives parsed; the field rules read text.
        fields.set(part.fieldname, typeof part.value === 'string' ? part.value : JSON.stringify(part.value));
      }
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    const code = (e as { code?: string }).code;
    if (code === 'FST_FILES_LIMIT') throw params(`too many files (at most ${totalFiles})`);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw params(`too many form fields (at most ${MAX_TEXT_FIELDS})`);
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw params(`a file is larger than ${limits.maxFileBytes} bytes`);
    if (code === 'FST_PROTO_VIOLATION') throw params('a field is named after an Object.prototype property (__proto__, constructor ...), which is not allowed');
    throw params(`malformed multipart body (${(e as Error).message})`);
  }
  return { fields, files };
}

/**
 * After an answer sent before the request body was read to its end (a refusal part-way through an
 * upload, or before it), reads and discards the rest, so a client still sending sees the answer at
 * once instead of stalling on a full socket buffer (multipart parsing stops at the error and
 * leaves the body unread). Bounded: past `maxBytes` more, or `maxMs`, the connection is closed.
 * The connection stays usable for keep-alive when the rest arrives within the bounds.
 */
export function discardUnreadBody(req: FastifyRequest, maxBytes: number, maxMs: number): void {
  const raw = req.raw;
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  let seen = 0;
  const close = () => {
    cleanup();
    raw.socket?.destroy();
  };
  const onData = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > maxBytes) close();
  };
  const timer = setTimeout(close, maxMs);
  timer.unref();
  const cleanup = () => {
    clearTimeout(timer);
    raw.off('data', onData);
  };
  raw.on('data', onData);
  raw.once('end', cleanup);
  raw.once('close', cleanup);
  raw.resume();
}
