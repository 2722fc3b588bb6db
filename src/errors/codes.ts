// One catalog of every error the service can return or record. Each entry carries the HTTP status
// (the task API also uses it as its envelope `code`), whether a task failing with it may be retried,
// and the default English text. Job-API numeric codes map from here as well (see api/).

export const ErrorCatalog = {
  // --- request errors (API) ---
  AUTH_MISSING: { status: 401, retryable: false, message: 'missing Authorization header' },
  AUTH_INVALID: { status: 401, retryable: false, message: 'invalid API token' },
  BODY_INVALID: { status: 400, retryable: false, message: 'invalid request body' },
  BODY_TOO_LARGE: { status: 413, retryable: false, message: 'request body too large' },
  VERSION_INVALID: { status: 400, retryable: false, message: 'version must be a 64-character lowercase hex ID' },
  VERSION_NOT_FOUND: { status: 404, retryable: false, message: 'model version not found' },
  INPUT_INVALID: { status: 422, retryable: false, message: 'invalid input' },
  URL_NOT_ALLOWED: { status: 422, retryable: false, message: 'URL not allowed' },
  INSUFFICIENT_CREDITS: { status: 402, retryable: false, message: 'insufficient credits' },
  TASK_NOT_FOUND: { status: 404, retryable: false, message: 'task not found' },
  TASK_ALREADY_ENDED: { status: 409, retryable: false, message: 'task has already ended' },
  FILE_NOT_FOUND: { status: 404, retryable: false, message: 'file not found' },
  FILE_EXPIRED: { status: 410, retryable: false, message: 'file deleted after the retention period' },
  ROUTE_NOT_FOUND: { status: 404, retryable: false, message: 'route not found' },
  NOT_READY: { status: 503, retryable: true, message: 'service not ready' },
  /**
   * Redis (tasks, credits, keys, the queue) cannot be reached. Nothing can be read or written, so
   * the request is refused at once, with Retry-After, rather than left hanging. A create refused
   * this way may still have been recorded and charged if the link dropped after the write reached
   * Redis (it then runs normally): check the task list before creating it again.
   */
  STORE_UNAVAILABLE: { status: 503, retryable: true, retryAfterS: 2, message: 'the service cannot reach its data store (Redis); try again shortly' },
  /**
   * The API process is already taking in UPLOAD_INFLIGHT_MAX_BYTES of uploads. Refused before the
   * body is read, so nothing was stored or charged; the upload can simply be sent again.
   */
  UPLOADS_BUSY: { status: 503, retryable: true, retryAfterS: 5, message: 'the service is receiving too many uploads at once; try again in a few seconds' },
  /** Idempotency-Key is empty, too long or has characters outside visible ASCII. */
  IDEMPOTENCY_KEY_INVALID: { status: 400, retryable: false, message: 'Idempotency-Key must be 1 to 255 visible ASCII characters' },
  /**
   * The user already created something with this Idempotency-Key (in its lifetime) from a different
   * request. 422 as the IETF idempotency-key draft answers a reused key; nothing was created or
   * charged. (A duplicate that matches is not an error: it answers the first request's id.)
   */
  IDEMPOTENCY_KEY_REUSED: { status: 422, retryable: false, message: 'this Idempotency-Key was already used with a different request' },
  /** Cancel-After is not a duration such as 30s, 2m, 1h30m, or is outside 1 s .. 24 h. */
  CANCEL_AFTER_INVALID: { status: 400, retryable: false, message: 'Cancel-After must be a duration such as 30s, 2m or 1h (1 s to 24 h)' },
  JOB_PARAMS_INVALID: { status: 400, retryable: false, message: 'Params error' },
  JOB_NOT_FOUND: { status: 404, retryable: false, message: 'Task not found' },

  // --- task failures (recorded in the task's `error`) ---
  INPUT_UNREACHABLE: { status: 422, retryable: false, message: 'input file could not be downloaded' },
  INPUT_TOO_LARGE: { status: 422, retryable: false, message: 'input file is too large' },
  INPUT_NOT_IMAGE: { status: 422, retryable: false, message: 'input file is not a JPEG, PNG or WebP image' },
  IMAGE_TOO_MANY_PIXELS: { status: 422, retryable: false, message: 'image has too many pixels' },
  IMAGE_DECODE_FAILED: { status: 422, retryable: false, message: 'image could not be decoded' },
  NO_FACE_FOUND: { status: 422, retryable: false, message: 'no face found in the image' },
  NO_PERSON_FOUND: { status: 422, retryable: false, message: 'no person found in the image' },
  FACE_TOO_SMALL: { status: 422, retryable: false, message: 'the face is too small' },
  FACE_TILTED: { status: 422, retryable: false, message: 'the face is tilted too far' },
  MODEL_UNAVAILABLE: { status: 500, retryable: false, message: 'model graph is not available on this worker' },
  INFERENCE_FAILED: { status: 500, retryable: true, message: 'model run failed' },
  /**
   * The run passed INFERENCE_TIMEOUT_MS; its thread was terminated and replaced. Retried once: the
   * second timeout of the same task fails it (task-processor counts them in the job's data).
   */
  INFERENCE_TIMEOUT: { status: 500, retryable: true, message: 'model run took too long' },
  WORKER_LOST: { status: 500, retryable: false, message: 'the task lost its worker too many times' },
  /**
   * The task reached its Cancel-After deadline before it ended: recorded on the canceled task
   * (refunded). 408: the client's own time limit ran out.
   */
  DEADLINE_EXCEEDED: { status: 408, retryable: false, message: 'the task did not end before its Cancel-After deadline' },
  /**
   * A pipeline run stopped at a stage boundary because its task was canceled (deadline) or handed
   * back. The task processor decides what the task becomes; this never ends up in a record.
   */
  RUN_STOPPED: { status: 500, retryable: true, message: 'the run was stopped at a stage boundary' },
  INTERNAL: { status: 500, retryable: true, message: 'internal error' },
  /** A defect (TypeError, RangeError, ZodError ...): the same input fails the same way, so never retried. */
  PROGRAM_ERROR: { status: 500, retryable: false, message: 'internal error' },
} as const satisfies Record<string, { status: number; retryable: boolean; message: string; retryAfterS?: number }>;

export type ErrorCode = keyof typeof ErrorCatalog;

/** Seconds for the Retry-After header of an error answer, for the codes that carry one. */
export function retryAfterS(code: ErrorCode): number | undefined {
  const entry = ErrorCatalog[code];
  return 'retryAfterS' in entry ? entry.retryAfterS : undefined;
}

/** A typed, cataloged error. `message` is user-facing English; `details` is machine-readable. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message?: string, details?: Record<string, unknown>, options?: ErrorOptions) {
    super(message ?? ErrorCatalog[code].message, options);
    this.name = 'AppError';
    this.code = code;
    this.status = ErrorCatalog[code].status;
    this.retryable = ErrorCatalog[code].retryable;
    this.details = details;
  }

  /** Plain form that crosses a worker-thread boundary; the cause goes as its text, for the log. */
  toJSON(): SerializedAppError {
    const cause = causeText(this);
    return { code: this.code, message: this.message, details: this.details, ...(cause === undefined ? {} : { cause }) };
  }

  static fromJSON(s: SerializedAppError): AppError {
    return new AppError(s.code, s.message, s.details, s.cause === undefined ? undefined : { cause: s.cause });
  }
}

export interface SerializedAppError {
  code: ErrorCode;
  message: string;
  details: Record<string, unknown> | undefined;
  cause?: string;
}

/**
 * The low-level text behind an error (libvips, TLS, a socket), for the server log only: messages
 * a caller sees say what failed in our words.
 */
export function causeText(e: Error): string | undefined {
  const c = e.cause;
  if (c === undefined) return undefined;
  if (!(c instanceof Error)) return String(c);
  const code = (c as { code?: unknown }).code;
  const inner = c.cause instanceof Error ? `: ${c.cause.message}` : '';
  return `${typeof code === 'string' ? `${code} ` : ''}${c.message}${inner}`;
}

/**
 * A failed task's `error` text. Unknown errors (INTERNAL, PROGRAM_ERROR) carry whatever a library
 * threw (paths, library text): the record gets the catalog's words, the log keeps the rest.
 */
export function taskErrorText(e: AppError): string {
  if (e.code === 'INTERNAL') return `${e.code}: ${ErrorCatalog.INTERNAL.message}`;
  if (e.code === 'PROGRAM_ERROR') {
    const name = typeof e.details?.name === 'string' ? ` (${e.details.name})` : '';
    return `${e.code}: ${ErrorCatalog.PROGRAM_ERROR.message}${name}`;
  }
  return `${e.code}: ${e.message}`;
}

export function isAppError(e: unknown): e is AppError {
  return e instanceof AppError;
}

/**
 * Errors that mean a defect in our code or a schema mismatch, not bad luck: retrying runs the same
 * code on the same input. Matched by name so a ZodError from any zod copy (and one re-created on
 * the other side of a thread boundary) counts. V8's "Array buffer allocation failed" is a
 * RangeError too, but it is memory pressure, which another attempt (maybe on another worker) can
 * survive, so it stays retryable.
 */
const PROGRAM_ERROR_NAMES = new Set(['TypeError', 'RangeError', 'ReferenceError', 'SyntaxError', 'EvalError', 'URIError', 'ZodError']);

export function isProgramError(e: unknown): e is Error {
  if (!(e instanceof Error) || !PROGRAM_ERROR_NAMES.has(e.name)) return false;
  return !(e.name === 'RangeError' && /allocation failed/i.test(e.message));
}

/**
 * Any thrown value as an AppError, keeping the cause: defects (isProgramError) become PROGRAM_ERROR
 * (not retried) with the error's name in `details.name`; anything else unknown becomes INTERNAL
 * (retryable). Both codes survive toJSON/fromJSON across the inference-thread boundary.
 */
export function toAppError(e: unknown): AppError {
  if (e instanceof AppError) return e;
  if (isProgramError(e)) return new AppError('PROGRAM_ERROR', `${e.name}: ${e.message}`, { name: e.name }, { cause: e });
  const message = e instanceof Error ? e.message : String(e);
  return new AppError('INTERNAL', message, undefined, { cause: e });
}

/**
 * Whether a failed task attempt is its last. Not retryable, or the attempts are used up; and a run
 * that timed out is retried once only: a second timeout means the input itself is slow (or hangs
 * the model), and each try holds an inference thread for the whole deadline.
 */
export function isFinalFailure(err: AppError, attempt: { number: number; max: number; inferenceTimeouts?: number }): boolean {
  if (!err.retryable || attempt.number >= attempt.max) return true;
  return err.code === 'INFERENCE_TIMEOUT' && (attempt.inferenceTimeouts ?? 0) >= 1;
}

/**
 * The job APIs' numeric codes (spec "Errors"). Request errors map from the catalog; the progress
 * codes describe a job's state on get-job.
 */
export const JobCode = {
  SUCCESS: 100000,
  FAILURE: 200000,
  SYSTEM_ERROR: 300101,
  IN_PROGRESS: 300102,
  GENERATED: 300103,
  GENERATION_FAILED: 300104,
  INSUFFICIENT_CREDITS: 400101,
  PARAMS_ERROR: 400301,
  TOKEN_NULL: 400302,
  TOKEN_ERROR: 400303,
  TASK_NOT_FOUND: 400501,
} as const;

const JOB_CODE_OF: Partial<Record<ErrorCode, { code: number; text: string }>> = {
  AUTH_MISSING: { code: JobCode.TOKEN_NULL, text: 'Token is null' },
  AUTH_INVALID: { code: JobCode.TOKEN_ERROR, text: 'Token error' },
  JOB_PARAMS_INVALID: { code: JobCode.PARAMS_ERROR, text: 'Params error' },
  BODY_TOO_LARGE: { code: JobCode.PARAMS_ERROR, text: 'Params error' },
  BODY_INVALID: { code: JobCode.PARAMS_ERROR, text: 'Params error' },
  INSUFFICIENT_CREDITS: { code: JobCode.INSUFFICIENT_CREDITS, text: 'Insufficient credits' },
  JOB_NOT_FOUND: { code: JobCode.TASK_NOT_FOUND, text: 'Task not found' },
  // The spec's codes have nothing for these; they are about the request's parameters (a header),
  // so 400301 with a message that says which.
  IDEMPOTENCY_KEY_INVALID: { code: JobCode.PARAMS_ERROR, text: 'Params error' },
  IDEMPOTENCY_KEY_REUSED: { code: JobCode.PARAMS_ERROR, text: 'Params error' },
  // The spec has no "unavailable" code; 300101 is its server-fault code, which clients already
  // handle. The job routes answer it with HTTP 503 and Retry-After (jobHttpStatus) instead of 500.
  STORE_UNAVAILABLE: { code: JobCode.SYSTEM_ERROR, text: 'System error' },
  // Likewise 300101 with HTTP 503 and Retry-After; the message says the upload budget was full.
  UPLOADS_BUSY: { code: JobCode.SYSTEM_ERROR, text: 'System error' },
};

/**
 * HTTP status of a job-API answer: 200 with the outcome in `code`, except a server fault (300101):
 * 503 when the data store is unreachable (retry soon, see Retry-After), 500 otherwise.
 */
export function jobHttpStatus(jobCode: number, e?: AppError): number {
  if (jobCode !== JobCode.SYSTEM_ERROR) return 200;
  return e?.status === 503 ? 503 : 500;
}

/** An error as the job APIs report it: numeric code and English text ("Params error: <why>"). */
export function toJobError(e: AppError): { code: number; en: string } {
  const m = JOB_CODE_OF[e.code];
  if (!m) return { code: JobCode.SYSTEM_ERROR, en: 'System error' };
  // Token errors read exactly as the spec's table; the others say why.
  const plain = e.code === 'AUTH_MISSING' || e.code === 'AUTH_INVALID' || e.message === m.text;
  const detail = !plain && e.message ? `: ${e.message}` : '';
  return { code: m.code, en: `${m.text}${detail}` };
}

/**
 * A measured value that broke a limit, for a refusal's message: rounded to a whole number, or to
 * one decimal where rounding would land on the limit ("tilted 45 degrees; at most 45 are
 * accepted" read as a contradiction for 45.4).
 */
export function pastLimit(value: number, limit: number): string {
  const whole = Math.round(value);
  return whole === Math.round(limit) ? value.toFixed(1) : String(whole);
}
