// Task records, statuses and the allowed transitions. The store enforces these atomically in Redis
// (store/lua/transition.lua receives the allowed "from" set computed here).
import { z } from 'zod';
import type { VersionId } from './version-id.ts';

export const TASK_STATUSES = ['starting', 'processing', 'succeeded', 'failed', 'canceled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const TERMINAL_STATUSES: readonly TaskStatus[] = ['succeeded', 'failed', 'canceled'];

/**
 * starting -> processing -> succeeded | failed; starting | processing -> canceled.
 * processing -> processing is a re-claim: the task's worker died and another one took it over.
 * starting -> failed: its queue job failed or vanished before any worker claimed the task (a
 * worker died between taking the job and claiming the task, more than MAX_STALLED times).
 * Terminal states never change.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  starting: ['processing', 'failed', 'canceled'],
  processing: ['processing', 'succeeded', 'failed', 'canceled'],
  succeeded: [],
  failed: [],
  canceled: [],
};

export function isTerminal(s: TaskStatus): boolean {
  return TERMINAL_STATUSES.includes(s);
}

/** Statuses from which `to` may be reached. */
export function allowedFrom(to: TaskStatus): TaskStatus[] {
  return TASK_STATUSES.filter((from) => TRANSITIONS[from].includes(to));
}

/**
 * The public task record: exactly the fields of the spec (task read and webhook body). A zod schema
 * rather than an interface so the OpenAPI document (api/openapi.ts) is generated from the type the
 * code compiles against; nothing parses responses with it at run time.
 */
export const TaskViewSchema = z.strictObject({
  task_id: z.string().meta({ description: 'Identifier of the task (32 lowercase hex).' }),
  user_id: z.number().int().meta({ description: 'Owner of the task.' }),
  version: z.string().meta({ description: 'The 64-character model version ID the task ran (empty for a job whose pipeline had no installed version).' }),
  error: z.string().nullable().meta({ description: 'Null when there is no error; on failure "<CODE>: <why>".' }),
  total_time: z.number().nullable().meta({ description: 'Seconds from creation to the end of the run; null until it ends.' }),
  predict_time: z.number().nullable().meta({ description: 'Seconds spent in the pipeline run; null until it ends.' }),
  logs: z.string().nullable().meta({ description: 'Run logs, one line each: stage timings ("<stage>: <ms> ms"), the attempt, notes; null when none.' }),
  output: z
    .array(z.string())
    .nullable()
    .meta({ description: 'Output file URLs (GET with the same Authorization header) on success; null otherwise.' }),
  status: z.enum(TASK_STATUSES),
  create_at: z.number().int().meta({ description: 'Creation time, unix seconds.' }),
  completed_at: z.number().int().nullable().meta({ description: 'End time, unix seconds; null while the task runs.' }),
});
export type TaskView = z.infer<typeof TaskViewSchema>;

/** What the store keeps: the view's sources plus internal bookkeeping. Times are unix milliseconds. */
export interface TaskRecord {
  taskId: string;
  userId: number;
  /** Null only for a job whose pipeline had no installed version (it fails, refunded). */
  version: VersionId | null;
  pipeline: string;
  /** The job-API job this task runs, if any. */
  jobId: string | null;
  input: Record<string, unknown>;
  webhookUrl: string | null;
  status: TaskStatus;
  error: string | null;
  logs: string | null;
  /** Blob keys of the outputs, in order. */
  outputKeys: string[] | null;
  predictTimeS: number | null;
  totalTimeS: number | null;
  createdMs: number;
  completedMs: number | null;
  cost: number;
  attempts: number;
  /** When retention deleted the task's input, outputs and logs; null while they are kept. */
  purgedMs: number | null;
  /** Cancel-After: when the task is canceled if it has not ended (unix ms, Redis clock); null or absent: none. */
  deadlineMs?: number | null;
}

/** Builds the public view; output blob keys become URLs under the public base. */
export function toTaskView(r: TaskRecord, outputUrl: (blobKey: string) => string): TaskView {
  return {
    task_id: r.taskId,
    user_id: r.userId,
    version: r.version ?? '',
    error: r.error,
    total_time: r.totalTimeS,
    predict_time: r.predictTimeS,
    logs: r.logs,
    output: r.outputKeys ? r.outputKeys.map(outputUrl) : null,
    status: r.status,
    create_at: Math.floor(r.createdMs / 1000),
    completed_at: r.completedMs === null ? null : Math.floor(r.completedMs / 1000),
  };
}

/** Stage timings in milliseconds, in the order they ran. */
export type StageTimings = Array<[stage: string, ms: number]>;

export function formatStageLogs(stages: StageTimings, extra: string[] = []): string {
  const lines = stages.map(([stage, ms]) => `${stage}: ${ms.toFixed(1)} ms`);
  return [...lines, ...extra].join('\n');
}
