// Task records, statuses and the allowed transitions. The store enforces these atomically in Redis
// (store/lua/transition.lua receives the allowed "from" set computed here).
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

/** The public task record: exactly the fields of the spec (task read and webhook body). */
export interface TaskView {
  task_id: string;
  user_id: number;
  version: string;
  error: string | null;
  total_time: number | null;
  predict_time: number | null;
  logs: string | null;
  output: string[] | null;
  status: TaskStatus;
  create_at: number;
  completed_at: number | null;
}

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
