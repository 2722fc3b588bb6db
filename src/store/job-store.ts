// Job records of the job APIs. A job is created together with its task (TaskStore.create writes
// both in one step); its state is its task's. The record keeps what the task does not: the kind,
// the parameters as given, the stored input files and the secret of its file URLs.
import type { JobKind } from '../domain/job.ts';
import type { Keyspace, RedisClient } from './redis.ts';

export interface JobRecord {
  jobId: string;
  userId: number;
  kind: JobKind;
  taskId: string;
  params: Record<string, unknown>;
  /** Stored input file names, in order (try-on: garment, then model). */
  inputs: string[];
  /** Unguessable part of the job's file URLs. */
  fileToken: string;
  createdMs: number;
}

/** The fields TaskStore.create writes for a job. */
export function jobFields(j: Omit<JobRecord, 'createdMs'>): Record<string, string | number> {
  return {
    job_id: j.jobId,
    user_id: j.userId,
    kind: j.kind,
    task_id: j.taskId,
    params: JSON.stringify(j.params),
    inputs: JSON.stringify(j.inputs),
    file_token: j.fileToken,
  };
}

export class JobStore {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: Keyspace,
  ) {}

  async get(jobId: string): Promise<JobRecord | null> {
    const h = await this.redis.hgetall(this.keys.job(jobId));
    if (!h.job_id) return null;
    return {
      jobId: h.job_id,
      userId: Number(h.user_id),
      kind: h.kind as JobKind,
      taskId: h.task_id!,
      params: JSON.parse(h.params ?? '{}') as Record<string, unknown>,
      inputs: JSON.parse(h.inputs ?? '[]') as string[],
      fileToken: h.file_token!,
      createdMs: Number(h.created_ms),
    };
  }
}
