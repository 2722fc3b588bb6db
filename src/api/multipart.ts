// Reads a multipart/form-data body part by part (streamed by busboy), keeping at most `maxFiles`
// files of at most `maxFileBytes` each and small text fields: memory is bounded by the limits.
// Anything out of bounds or malformed is a JOB_PARAMS_INVALID error saying why.
import type { FastifyRequest } from 'fastify';
import type {} from '@fastify/multipart';
import { AppError } from '../errors/codes.ts';

export interface UploadedFile {
  field: string;
  filename: string;
  bytes: Buffer;
}

export interface MultipartLimits {
  /** File fields accepted, with how many files each may carry. */
  fileFields: Readonly<Record<string, number>>;
  maxFileBytes: number;
  maxFieldBytes: number;
}

export interface MultipartBody {
  fields: Map<string, string>;
  files: UploadedFile[];
}

const params = (why: string) => new AppError('JOB_PARAMS_INVALID', why);

export async function readMultipart(req: FastifyRequest, limits: MultipartLimits): Promise<MultipartBody> {
  if (!req.isMultipart()) throw params('the body must be multipart/form-data');
  const fields = new Map<string, string>();
  const files: UploadedFile[] = [];
  const counts = new Map<string, number>();
  const totalFiles = Object.values(limits.fileFields).reduce((a, b) => a + b, 0);
  try {
    const parts = req.parts({
      limits: {
        fileSize: limits.maxFileBytes,
        // One more than allowed, so "too many files" is ours to say, with the field's name.
        files: totalFiles + 1,
        fields: 32,
        fieldSize: limits.maxFieldBytes,
        parts: totalFiles + 33,
      },
    });
    for await (const part of parts) {
      if (part.type === 'file') {
        const max = limits.fileFields[part.fieldname];
        if (max === undefined) {
          part.file.resume();
          throw params(`unexpected file field "${part.fieldname}" (files go in ${Object.keys(limits.fileFields).join(' or ')})`);
        }
        const n = (counts.get(part.fieldname) ?? 0) + 1;
        counts.set(part.fieldname, n);
        if (n > max) {
          part.file.resume();
          throw params(`${part.fieldname}: at most ${max} file${max > 1 ? 's' : ''} allowed`);
        }
        let bytes: Buffer;
        try {
          bytes = await part.toBuffer();
        } catch (e) {
          if ((e as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
            throw params(`${part.fieldname}: file ${n} (${part.filename || 'unnamed'}) is larger than ${limits.maxFileBytes} bytes`);
          }
          throw e;
        }
        files.push({ field: part.fieldname, filename: part.filename, bytes });
      } else {
        if (part.valueTruncated) throw params(`${part.fieldname}: longer than ${limits.maxFieldBytes} bytes`);
        if (fields.has(part.fieldname)) throw params(`${part.fieldname}: given more than once`);
        fields.set(part.fieldname, String(part.value));
      }
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    const code = (e as { code?: string }).code;
    if (code === 'FST_FILES_LIMIT') throw params(`too many files (at most ${totalFiles})`);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw params('too many form fields');
    throw params(`malformed multipart body (${(e as Error).message})`);
  }
  return { fields, files };
}
