// The job APIs: AI hairstyle and virtual try-on. Multipart create-job, get-job, the
// {code, result, message: {en}} envelope and the spec's numeric codes. Each job becomes a task on
// the registry's default version of its pipeline, so the worker path, timings, refunds and
// retention are the task API's. Every answer is HTTP 200 with the outcome in `code` (what the
// spec's clients read), except 300101, a server fault, which is HTTP 500.
import { randomBytes, randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, JobCode, toAppError, toJobError } from '../../errors/codes.ts';
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
import { readMultipart, type UploadedFile } from '../multipart.ts';
import type { AppDeps } from '../app.ts';

const JOB_ID = /^[0-9a-f]{32}$/;
const EXT: Record<string, string> = { jpeg: 'jpg', png: 'png', webp: 'webp' };
const params = (why: string) => new AppError('JOB_PARAMS_INVALID', why);

interface JobSpec {
  kind: JobKind;
  path: string;
  /** File fields, in the order their files are stored and listed (try-on: garment, then model). */
  fileFields: Record<string, { min: number; max: number }>;
  /** The text fields, validated by the pipeline's own input rules (pipelines/<name>/spec.ts). */
  fields: z.ZodType<Record<string, unknown>>;
  /** Output pictures a job with these parameters makes (credits are per picture). */
  pictures(params: Record<string, unknown>): number;
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

/** Validates a job's text fields with its pipeline's input rules; the first problem is the 400301 message. */
function parseFields(spec: JobSpec, fields: Map<string, string>): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const [k, v] of fields) {
    if (v.trim() === '' && k !== 'prompt') continue;
    raw[k] = TEXT_VALUES[k]?.(v) ?? v;
  }
  const known = new Set(Object.keys((spec.fields as unknown as { shape: Record<string, unknown> }).shape));
  for (const k of Object.keys(raw)) if (!known.has(k)) delete raw[k];
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
  doneCode: JobCode.GENERATED,
  doneText: 'Image generated successfully',
};

const TRYON: JobSpec = {
  kind: 'tryon',
  path: 'ai-virtual-try-on',
  fileFields: { clothes_image: { min: 1, max: 1 }, custom_model: { min: 1, max: 1 } },
  fields: TryonJobFields as unknown as z.ZodType<Record<string, unknown>>,
  pictures: () => 1,
  doneCode: JobCode.SUCCESS,
  doneText: 'Request success',
};

function envelope(reply: FastifyReply, code: number, result: unknown, en: string) {
  return reply.status(code === JobCode.SYSTEM_ERROR ? 500 : 200).send({ code, result, message: { en } });
}

/** Checks each file: a JPEG, PNG or WebP by its bytes, and within the pixel cap. */
async function checkImages(files: UploadedFile[], maxPixels: number): Promise<Array<UploadedFile & { ext: string }>> {
  const out: Array<UploadedFile & { ext: string }> = [];
  const index = new Map<string, number>();
  for (const f of files) {
    const n = (index.get(f.field) ?? 0) + 1;
    index.set(f.field, n);
    const what = `${f.field}: file ${n}${f.filename ? ` (${f.filename.slice(0, 60)})` : ''}`;
    const type = sniffImageType(f.bytes);
    if (!type) throw params(`${what} is not a JPEG, PNG or WebP image`);
    const size = await readImageSize(f.bytes);
    if (!size) throw params(`${what} could not be read as an image`);
    if (size.width * size.height > maxPixels) {
      throw params(`${what} is ${size.width}x${size.height} pixels, above the limit of ${maxPixels} pixels`);
    }
    out.push({ ...f, ext: EXT[type]! });
  }
  return out;
}

export function registerJobRoutes(app: FastifyInstance, deps: AppDeps): void {
  const fileUrl = (job: JobRecord, kind: 'inputs' | 'outputs', name: string) =>
    `${deps.publicBaseUrl}/files/jobs/${job.jobId}/${job.fileToken}/${kind}/${name}`;

  app.register(async (scope) => {
    await scope.register(multipart);
    scope.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
      const e = toAppError(err);
      if (!e.code.startsWith('JOB_') && e.code !== 'AUTH_MISSING' && e.code !== 'AUTH_INVALID' && e.code !== 'INSUFFICIENT_CREDITS') {
        req.log.error({ err }, 'job request failed');
      }
      const j = toJobError(e);
      return envelope(reply, j.code, {}, j.en);
    });

    for (const spec of [HAIRSTYLE, TRYON]) {
      scope.post(`/api/service/v1/${spec.path}/create-job`, async (req, reply) => {
        const userId = await authenticate(req, deps.accounts);
        const maxima = Object.fromEntries(Object.entries(spec.fileFields).map(([k, v]) => [k, v.max]));
        const body = await readMultipart(req, { fileFields: maxima, maxFileBytes: deps.jobs.fileMaxBytes, maxFieldBytes: 4 * PROMPT_MAX_LENGTH });
        for (const [field, { min, max }] of Object.entries(spec.fileFields)) {
          const n = body.files.filter((f) => f.field === field).length;
          if (n < min) throw params(min === max ? `${field}: exactly ${min} file required` : `${field}: ${min} to ${max} files required`);
        }
        const jobParams = parseFields(spec, body.fields);
        const parsed = { params: jobParams, pictures: spec.pictures(jobParams) };
        // Stored in the order of the spec's fields: try-on lists the garment, then the model.
        const ordered = Object.keys(spec.fileFields).flatMap((field) => body.files.filter((f) => f.field === field));
        const images = await checkImages(ordered, deps.maxPixels);

        const version = deps.jobs.versions[spec.kind];
        const jobId = randomUUID().replace(/-/g, '');
        const taskId = randomUUID().replace(/-/g, '');
        const names = images.map((img, i) => `${i + 1}-${img.field}.${img.ext}`);
        const keys = names.map((n) => taskInputKey(taskId, n));
        await Promise.all(images.map((img, i) => deps.blobs.put(keys[i]!, img.bytes)));
        const fileInput: Record<string, string | string[]> = {};
        for (const [field, { max }] of Object.entries(spec.fileFields)) {
          const refs = names.filter((_, i) => images[i]!.field === field).map((n) => storedInputRef(taskId, n));
          fileInput[field] = max > 1 ? refs : refs[0]!;
        }
        try {
          await deps.submitter.submit({
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
          });
        } catch (e) {
          await deps.blobs.removePrefix(taskPrefix(taskId));
          throw e;
        }
        return envelope(reply, JobCode.SUCCESS, { job_id: jobId }, 'Request success');
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
): { code: number; en: string; result: { output_image_url: string[]; input_image_url: string[]; job_id: string; message: string } } {
  const expired = task.purgedMs !== null;
  const inputs = expired ? [] : job.inputs.map((n) => fileUrl(job, 'inputs', n));
  const base = { output_image_url: [] as string[], input_image_url: inputs, job_id: job.jobId, message: '' };
  switch (task.status) {
    case 'starting':
    case 'processing':
      return { code: JobCode.IN_PROGRESS, en: 'Image generation in progress', result: base };
    case 'succeeded': {
      if (expired) {
        const hours = Math.round(retentionMs / 3_600_000);
        const why = `the generated images were deleted ${hours} hours after the job ended`;
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

