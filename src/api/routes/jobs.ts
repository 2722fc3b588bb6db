// The job APIs: AI hairstyle and virtual try-on. Multipart create-job, get-job, the
// {code, result, message: {en}} envelope and the spec's numeric codes. Each job becomes a task on
// the registry's default version of its pipeline, so the worker path, timings, refunds and
// retention are the task API's. Every answer is HTTP 200 with the outcome in `code` (what the
// spec's clients read), except 300101, a server fault, which is HTTP 500.
import { randomBytes, randomUUID } from 'node:crypto';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, JobCode, toAppError, toJobError } from '../../errors/codes.ts';
import {
  CLOTHES_TYPES,
  CREDITS_PER_PICTURE,
  DEFAULT_HAIRSTYLE,
  HAIR_COLORS,
  HAIRSTYLES,
  JOB_PIPELINE,
  PROMPT_MAX_LENGTH,
  canonicalHairColor,
  canonicalHairstyle,
  parseBooleanText,
  type JobKind,
} from '../../domain/job.ts';
import { readImageSize } from '../../imaging/image.ts';
import { sniffImageType } from '../../imaging/sniff.ts';
import type { JobRecord } from '../../store/job-store.ts';
import { jobFields } from '../../store/job-store.ts';
import type { TaskRecord } from '../../domain/task.ts';
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
  /** Validates the text fields; returns the job's parameters and how many pictures it makes. */
  parse(fields: Map<string, string>): { params: Record<string, unknown>; pictures: number };
  /** Code of a finished job (each API follows its own table). */
  doneCode: number;
  doneText: string;
}

const HAIRSTYLE: JobSpec = {
  kind: 'hairstyle',
  path: 'ai-hairstyle',
  fileFields: { image_files: { min: 1, max: 4 } },
  parse(f) {
    const colorText = f.get('hair_color');
    if (colorText === undefined) throw params(`hair_color: required, one of ${HAIR_COLORS.join(', ')}`);
    const hair_color = canonicalHairColor(colorText);
    if (!hair_color) throw params(`hair_color: must be one of ${HAIR_COLORS.join(', ')} (got "${colorText.slice(0, 40)}")`);
    const styleText = f.get('hairstyle');
    const hairstyle = styleText === undefined || styleText.trim() === '' ? DEFAULT_HAIRSTYLE : canonicalHairstyle(styleText);
    if (!hairstyle) throw params(`hairstyle: must be one of ${HAIRSTYLES.join(', ')} (got "${styleText!.slice(0, 40)}")`);
    const n = f.get('num_outputs');
    let num_outputs = 2;
    if (n !== undefined && n.trim() !== '') {
      if (!/^\s*\d+\s*$/.test(n) || Number(n) < 1 || Number(n) > 4) throw params(`num_outputs: must be an integer from 1 to 4 (got "${n.slice(0, 20)}")`);
      num_outputs = Number(n);
    }
    return { params: { hair_color, hairstyle, num_outputs }, pictures: num_outputs };
  },
  doneCode: JobCode.GENERATED,
  doneText: 'Image generated successfully',
};

const TRYON: JobSpec = {
  kind: 'tryon',
  path: 'ai-virtual-try-on',
  fileFields: { clothes_image: { min: 1, max: 1 }, custom_model: { min: 1, max: 1 } },
  parse(f) {
    const type = f.get('clothes_type');
    if (type === undefined) throw params(`clothes_type: required, one of ${CLOTHES_TYPES.join(', ')}`);
    const clothes_type = type.trim().toLowerCase();
    if (!(CLOTHES_TYPES as readonly string[]).includes(clothes_type)) {
      throw params(`clothes_type: must be one of ${CLOTHES_TYPES.join(', ')} (got "${type.slice(0, 40)}")`);
    }
    const prompt = f.get('prompt') ?? '';
    if (prompt.length > PROMPT_MAX_LENGTH) throw params(`prompt: at most ${PROMPT_MAX_LENGTH} characters (got ${prompt.length})`);
    const fc = f.get('forced_cutting');
    let forced_cutting = false;
    if (fc !== undefined && fc.trim() !== '') {
      const b = parseBooleanText(fc);
      if (b === null) throw params(`forced_cutting: must be true or false (got "${fc.slice(0, 20)}")`);
      forced_cutting = b;
    }
    return { params: { clothes_type, prompt, forced_cutting }, pictures: 1 };
  },
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
        const parsed = spec.parse(body.fields);
        // Stored in the order of the spec's fields: try-on lists the garment, then the model.
        const ordered = Object.keys(spec.fileFields).flatMap((field) => body.files.filter((f) => f.field === field));
        const images = await checkImages(ordered, deps.maxPixels);

        const version = deps.registry.defaultFor(JOB_PIPELINE[spec.kind], spec.kind === 'hairstyle' ? deps.jobs.hairstyleVersion : deps.jobs.tryonVersion);
        const jobId = randomUUID().replace(/-/g, '');
        const taskId = randomUUID().replace(/-/g, '');
        const names = images.map((img, i) => `${i + 1}-${img.field}.${img.ext}`);
        const keys = names.map((n) => `tasks/${taskId}/inputs/${n}`);
        await Promise.all(images.map((img, i) => deps.blobs.put(keys[i]!, img.bytes)));
        const fileInput: Record<string, string | string[]> = {};
        for (const [field, { max }] of Object.entries(spec.fileFields)) {
          const refs = keys.filter((_, i) => images[i]!.field === field).map((k) => `blob:${k}`);
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
          await deps.blobs.removePrefix(`tasks/${taskId}`);
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

