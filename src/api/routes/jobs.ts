// The job APIs: AI hairstyle and virtual try-on. Multipart create-job, get-job, the
// {code, result, message: {en}} envelope and the spec's numeric codes. Each job becomes a task on
// the registry's default version of its pipeline, so the worker path, timings, refunds and
// retention are the task API's. Every answer is HTTP 200 with the outcome in `code` (what the
// spec's clients read), except 300101, a server fault, which is HTTP 500 (503 with Retry-After
// when Redis is unreachable).
import { randomBytes, randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, JobCode, jobHttpStatus, toAppError, toJobError } from '../../errors/codes.ts';
import { asStoreUnavailable } from '../../store/redis.ts';
import type { z } from 'zod';
import { CREDITS_PER_PICTURE, JOB_PIPELINE, PROMPT_MAX_LENGTH, parseBooleanText, type JobKind } from '../../domain/job.ts';
import { HairstyleJobFields } from '../../pipelines/hairstyle/spec.ts';
import { TryonJobFields } from '../../pipelines/tryon/spec.ts';
import { readImageSize } from '../../imaging/image.ts';
import { sniffImageType } from '../../imaging/sniff.ts';
import type { JobRecord } from '../../store/job-store.ts';
import { jobFields } from '../../store/job-store.ts';
import type { TaskRecord } from '../../domain/task.ts';
import { storedInputRef, taskInputKey, taskPrefix } from '../../domain/blob-keys.ts';
import { authenticate } from '../auth.ts';
import { setRetryAfter } from '../envelope.ts';
import { idempotencyKeyOf } from '../request-headers.ts';
import { fileSha256, requestFingerprint } from '../../domain/idempotency.ts';
import type { JobFetchResult } from '../schemas.ts';
import { discardUnreadBody, maxMultipartBytes, readMultipart, type FilePart, type MultipartLimits } from '../multipart.ts';
import { UploadBudget } from '../upload-budget.ts';
import type { BlobStore } from '../../store/blob-store.ts';
import type { AppDeps } from '../app.ts';

const JOB_ID = /^[0-9a-f]{32}$/;
const EXT: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp' };
const params = (why: string) => new AppError('JOB_PARAMS_INVALID', why);
/** Bytes a file's type is told by (the longest signature, WebP's, is 12). */
const SNIFF_BYTES = 12;
/**
 * Bytes kept from the start of each upload to read its pixel size from (the rest goes to the
 * store only). PNG's size is in its first 33 bytes and a JPEG's frame header follows its EXIF and
 * ICC segments, within this for nearly every photo; for the others (and WebP, whose reader wants
 * the whole file) the stored file is read back once.
 */
const HEADER_BYTES = 256 * 1024;
/** How long a refused upload's remaining body is read and discarded before its connection is closed. */
const DISCARD_MAX_MS = 10_000;

export interface JobSpec {
  kind: JobKind;
  path: string;
  /** File fields, in the order their files are stored and listed (try-on: garment, then model). */
  fileFields: Record<string, { min: number; max: number }>;
  /** The text fields, validated by the pipeline's own input rules (pipelines/<name>/spec.ts). */
  fields: z.ZodType<Record<string, unknown>>;
  /** Output pictures a job with these parameters makes (credits are per picture). */
  pictures(params: Record<string, unknown>): number;
  /** Whether the fields choose how many pictures (and so the cost); else it is always one. */
  picturesVary: boolean;
  /** Code of a finished job (each API follows its own table). */
  doneCode: number;
  doneText: string;
}

/**
 * Multipart text -> the typed values the input schema checks: integers and booleans from their
 * spellings (text that is neither stays text, and the schema names the field); empty means absent.
 */
const TEXT_VALUES: Record<string, (s: string) => unknown> = {
  num_outputs: (s) => (/^\s*-?\d+(\.\d+)?\s*$/.test(s) ? Number(s) : s),
  forced_cutting: (s) => parseBooleanText(s) ?? s,
  clothes_type: (s) => s.trim().toLowerCase(),
};

/**
 * Validates a job's text fields with its pipeline's input rules; the first problem is the 400301
 * message. A field the API does not know is refused, naming it (as the task API refuses unknown
 * JSON fields): a misspelt optional field would otherwise be charged for and silently ignored.
 */
function parseFields(spec: JobSpec, fields: Map<string, string>): Record<string, unknown> {
  const known = Object.keys((spec.fields as unknown as { shape: Record<string, unknown> }).shape);
  for (const k of fields.keys()) {
    if (Object.hasOwn(spec.fileFields, k)) throw params(`${k}: must be a file, not a text field`);
    if (!known.includes(k)) throw params(`unknown field "${k}" (the fields are ${[...Object.keys(spec.fileFields), ...known].join(', ')})`);
  }
  const raw: Record<string, unknown> = {};
  for (const [k, v] of fields) {
    if (v.trim() === '' && k !== 'prompt') continue;
    raw[k] = TEXT_VALUES[k]?.(v) ?? v;
  }
  const parsed = spec.fields.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw params(`${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

const HAIRSTYLE: JobSpec = {
  kind: 'hairstyle',
  path: 'ai-hairstyle',
  fileFields: { image_files: { min: 1, max: 4 } },
  fields: HairstyleJobFields as unknown as z.ZodType<Record<string, unknown>>,
  pictures: (p) => p.num_outputs as number,
  picturesVary: true,
  doneCode: JobCode.GENERATED,
  doneText: 'Image generated successfully',
};

const TRYON: JobSpec = {
  kind: 'tryon',
  path: 'ai-virtual-try-on',
  fileFields: { clothes_image: { min: 1, max: 1 }, custom_model: { min: 1, max: 1 } },
  fields: TryonJobFields as unknown as z.ZodType<Record<string, unknown>>,
  pictures: () => 1,
  picturesVary: false,
  doneCode: JobCode.SUCCESS,
  doneText: 'Request success',
};

/** Both job APIs, as the routes below serve them (the OpenAPI document describes them from here). */
export const JOB_APIS: readonly JobSpec[] = [HAIRSTYLE, TRYON];

function envelope(reply: FastifyReply, code: number, result: unknown, en: string, error?: AppError) {
  return reply.status(jobHttpStatus(code, error)).send({ code, result, message: { en } });
}

/** An error answer in the job APIs' envelope, with Retry-After where its code carries one. */
export function sendJobError(reply: FastifyReply, e: AppError): FastifyReply {
  setRetryAfter(reply, e);
  const j = toJobError(e);
  return envelope(reply, j.code, {}, j.en, e);
}

/** An uploaded file, checked and written to the blob store under its final name. */
interface StoredUpload {
  field: string;
  name: string;
  /** sha256 of its bytes, when asked for (an Idempotency-Key's request fingerprint). */
  sha256?: string;
}

/**
 * Writes one uploaded file to the blob store as it arrives, checking it on the way: a JPEG, PNG or
 * WebP by its first bytes (which also name it: "<position>-<field>.<ext>", the position counted in
 * the spec's field order), not over the size cap, within the pixel cap by its header. Only the
 * first HEADER_BYTES stay in memory.
 */
async function storeUpload(spec: JobSpec, f: FilePart, taskId: string, blobs: BlobStore, maxPixels: number, hash: boolean): Promise<StoredUpload> {
  const what = `${f.field}: file ${f.n}${f.filename ? ` (${f.filename.slice(0, 60)})` : ''}`;
  const chunks: AsyncIterator<Buffer> = f.stream[Symbol.asyncIterator]();
  let head: Buffer = Buffer.alloc(0);
  while (head.length < SNIFF_BYTES) {
    const r = await chunks.next();
    if (r.done) break;
    head = head.length === 0 ? r.value : Buffer.concat([head, r.value]);
  }
  const type = sniffImageType(head);
  if (!type) {
    // Read to its end first: a file over the size cap says so, whatever it starts with.
    for (let r = await chunks.next(); !r.done; r = await chunks.next());
    throw f.tooLarge() ?? params(head.length === 0 ? `${what} is empty (0 bytes)` : `${what} is not a JPEG, PNG or WebP image`);
  }
  const offset = Object.entries(spec.fileFields).findIndex(([field]) => field === f.field);
  const position = Object.values(spec.fileFields).slice(0, offset).reduce((a, v) => a + v.max, 0) + f.n;
  const name = `${position}-${f.field}.${EXT[type]}`;
  const key = taskInputKey(taskId, name);
  const header: Buffer[] = [];
  let headerBytes = 0;
  let size = 0;
  const digest = hash ? fileSha256() : undefined;
  async function* tee(): AsyncGenerator<Buffer> {
    for (let chunk: Buffer | undefined = head; chunk; ) {
      size += chunk.length;
      digest?.update(chunk);
      if (headerBytes < HEADER_BYTES) {
        header.push(chunk.subarray(0, HEADER_BYTES - headerBytes));
        headerBytes += Math.min(chunk.length, HEADER_BYTES - headerBytes);
      }
      yield chunk;
      const r = await chunks.next();
      chunk = r.done ? undefined : r.value;
    }
  }
  await blobs.putStream(key, tee());
  const big = f.tooLarge();
  if (big) throw big;
  let dims = await readImageSize(Buffer.concat(header));
  if (!dims && size > headerBytes) dims = await readImageSize(await readBlob(blobs, key));
  if (!dims) throw params(`${what} could not be read as an image`);
  if (dims.width * dims.height > maxPixels) {
    throw params(`${what} is ${dims.width}x${dims.height} pixels, above the limit of ${maxPixels} pixels`);
  }
  return { field: f.field, name, sha256: digest?.digest() };
}

/** A stored blob's bytes (an upload whose header lies beyond HEADER_BYTES; at most the file cap). */
async function readBlob(blobs: BlobStore, key: string): Promise<Buffer> {
  const blob = await blobs.open(key);
  if (!blob) return Buffer.alloc(0);
  const parts: Buffer[] = [];
  for await (const chunk of blob.stream()) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** "24 hours", "90 minutes", "30 seconds": how long files are kept, in the unit that reads best. */
export function retentionText(ms: number): string {
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  if (ms >= 3_600_000 && (ms % 3_600_000 === 0 || ms >= 10 * 3_600_000)) return unit(Math.round(ms / 3_600_000), 'hour');
  if (ms >= 60_000) return unit(Math.round(ms / 60_000), 'minute');
  if (ms >= 1_000) return unit(Math.round(ms / 1_000), 'second');
  return 'less than a second';
}

export function registerJobRoutes(app: FastifyInstance, deps: AppDeps): void {
  const fileUrl = (job: JobRecord, kind: 'inputs' | 'outputs', name: string) =>
    `${deps.publicBaseUrl}/files/jobs/${job.jobId}/${job.fileToken}/${kind}/${name}`;
  const budget = new UploadBudget(deps.jobs.uploadInflightMaxBytes);
  const limitsOf = (spec: JobSpec): MultipartLimits => ({
    fileFields: Object.fromEntries(Object.entries(spec.fileFields).map(([k, v]) => [k, v.max])),
    maxFileBytes: deps.jobs.fileMaxBytes,
    maxFieldBytes: 4 * PROMPT_MAX_LENGTH,
  });
  const discardMaxBytes = Math.max(...[HAIRSTYLE, TRYON].map((spec) => maxMultipartBytes(limitsOf(spec))));

  app.register(async (scope) => {
    await scope.register(multipart);
    // An answer given before the body was read to its end (a refusal before or part-way through an
    // upload) must reach a client that is still sending: the rest is read and discarded, bounded.
    scope.addHook('onSend', async (req, _reply, payload) => {
      discardUnreadBody(req, discardMaxBytes, DISCARD_MAX_MS);
      return payload;
    });
    scope.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
      const e = asStoreUnavailable(err) ?? toAppError(err);
      if (!e.code.startsWith('JOB_') && e.code !== 'AUTH_MISSING' && e.code !== 'AUTH_INVALID' && e.code !== 'INSUFFICIENT_CREDITS' && e.code !== 'STORE_UNAVAILABLE' && e.code !== 'UPLOADS_BUSY' && !e.code.startsWith('IDEMPOTENCY_')) {
        req.log.error({ err }, 'job request failed');
      }
      return sendJobError(reply, e);
    });

    for (const spec of JOB_APIS) {
      scope.post(`/api/service/v1/${spec.path}/create-job`, async (req, reply) => {
        const userId = await authenticate(req, deps.accounts);
        if (!req.isMultipart()) throw params('the body must be multipart/form-data');
        const idempotencyKey = idempotencyKeyOf(req);
        // Before any of the body is read: a balance below the cheapest job of this API (one
        // picture) cannot pay for this one whatever its fields say, so its files are not taken in.
        // The exact cost is charged atomically with the job's creation below. Not for a key used
        // already: its repeat is answered with the first job, whatever the balance is now.
        const minCost = CREDITS_PER_PICTURE[spec.kind];
        const [balance, replay] = await Promise.all([
          deps.accounts.balance(userId),
          idempotencyKey ? deps.tasks.idempotencyKeyUsed(userId, idempotencyKey) : false,
        ]);
        if (balance < minCost && !replay) {
          const cost = spec.picturesVary ? `at least ${minCost} credits (${minCost} per picture)` : `${minCost} credits`;
          throw new AppError('INSUFFICIENT_CREDITS', `this costs ${cost}; the balance is ${balance}`, { balance, cost: minCost });
        }
        const limits = limitsOf(spec);
        const maxBody = maxMultipartBytes(limits);
        const declared = Number(req.headers['content-length']);
        const release = budget.tryAcquire(Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, maxBody) : maxBody);
        if (!release) throw new AppError('UPLOADS_BUSY');

        const taskId = randomUUID().replace(/-/g, '');
        try {
          const body = await readMultipart(req, limits, (f) => storeUpload(spec, f, taskId, deps.blobs, deps.maxPixels, idempotencyKey !== undefined));
          const jobParams = parseFields(spec, body.fields);
          for (const [field, { min, max }] of Object.entries(spec.fileFields)) {
            const n = body.files.filter((f) => f.field === field).length;
            if (n < min) throw params(min === max ? `${field}: exactly ${min} file required` : `${field}: ${min} to ${max} files required`);
          }
          const parsed = { params: jobParams, pictures: spec.pictures(jobParams) };
          // Listed in the order of the spec's fields: try-on lists the garment, then the model.
          const ordered = Object.keys(spec.fileFields).flatMap((field) => body.files.filter((f) => f.field === field));
          const names = ordered.map((f) => f.name);
          const version = deps.jobs.versions[spec.kind];
          const jobId = randomUUID().replace(/-/g, '');
          const fileInput: Record<string, string | string[]> = {};
          for (const [field, { max }] of Object.entries(spec.fileFields)) {
            const refs = ordered.filter((f) => f.field === field).map((f) => storedInputRef(taskId, f.name));
            fileInput[field] = max > 1 ? refs : refs[0]!;
          }
          const created = await deps.submitter.submit({
            taskId,
            userId,
            version: version?.id ?? null,
            pipeline: JOB_PIPELINE[spec.kind],
            input: { ...fileInput, ...parsed.params },
            webhookUrl: null,
            cost: CREDITS_PER_PICTURE[spec.kind] * parsed.pictures,
            retentionMs: deps.jobs.retentionMs,
            chargeReason: `job:${spec.kind}`,
            job: { jobId, fields: jobFields({ jobId, userId, kind: spec.kind, taskId, params: parsed.params, inputs: names, fileToken: randomBytes(16).toString('hex') }) },
            // The text fields as sent and each file's bytes (by sha256), in the order they are listed.
            idempotency: idempotencyKey
              ? {
                  keyHash: idempotencyKey,
                  fingerprint: requestFingerprint(`job:${spec.kind}`, { fields: Object.fromEntries(body.fields), files: ordered.map((f) => [f.field, f.sha256]) }),
                }
              : undefined,
          });
          if (!created.created) {
            // A repeat: the first request's job stands; these uploads are nobody's.
            await deps.blobs.removePrefix(taskPrefix(taskId));
            reply.header('idempotent-replayed', 'true');
            return envelope(reply, JobCode.SUCCESS, { job_id: created.jobId }, 'Request success');
          }
          return envelope(reply, JobCode.SUCCESS, { job_id: jobId }, 'Request success');
        } catch (e) {
          // Refused (or failed) before the job existed: nothing of it stays stored.
          await deps.blobs.removePrefix(taskPrefix(taskId));
          throw e;
        } finally {
          release();
        }
      });

      scope.get<{ Params: { job_id: string } }>(`/api/service/v1/${spec.path}/get-job/:job_id`, async (req, reply) => {
        const userId = await authenticate(req, deps.accounts);
        const job = JOB_ID.test(req.params.job_id) ? await deps.jobs.store.get(req.params.job_id) : null;
        const task = job && job.userId === userId && job.kind === spec.kind ? await deps.tasks.get(job.taskId) : null;
        if (!job || !task) throw new AppError('JOB_NOT_FOUND');
        const r = jobResult(spec, job, task, fileUrl, deps.jobs.retentionMs);
        return envelope(reply, r.code, r.result, r.en);
      });
    }
  });
}

function jobResult(
  spec: JobSpec,
  job: JobRecord,
  task: TaskRecord,
  fileUrl: (job: JobRecord, kind: 'inputs' | 'outputs', name: string) => string,
  retentionMs: number,
): { code: number; en: string; result: JobFetchResult } {
  const expired = task.purgedMs !== null;
  const inputs = expired ? [] : job.inputs.map((n) => fileUrl(job, 'inputs', n));
  const base = { output_image_url: [] as string[], input_image_url: inputs, job_id: job.jobId, message: '' };
  switch (task.status) {
    case 'starting':
    case 'processing':
      return { code: JobCode.IN_PROGRESS, en: 'Image generation in progress', result: base };
    case 'succeeded': {
      if (expired) {
        const why = `the generated images were deleted ${retentionText(retentionMs)} after the job ended`;
        return { code: spec.doneCode, en: `${spec.doneText}; ${why}`, result: { ...base, message: why } };
      }
      // The pictures a pipeline makes for a job are its result-N files (masks and JSON stay internal).
      const images = (task.outputKeys ?? []).map((k) => k.split('/').pop()!).filter((n) => /^result-\d+\.(jpe?g|png|webp)$/i.test(n));
      return { code: spec.doneCode, en: spec.doneText, result: { ...base, output_image_url: images.map((n) => fileUrl(job, 'outputs', n)) } };
    }
    case 'failed':
    case 'canceled': {
      const reason = task.status === 'canceled' ? 'the job was canceled' : (task.error ?? 'unknown error').replace(/^[A-Z_]+: /, '');
      return { code: JobCode.GENERATION_FAILED, en: 'Image generation failed', result: { ...base, message: reason } };
    }
  }
}

