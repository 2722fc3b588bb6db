// Task records in Redis hashes. Creation (with its charge) and every status change are single Lua
// scripts, so concurrent API and worker processes never see a half-applied change and terminal
// states never change. Times come from Redis (TIME), so every node shares one clock.
import fs from 'node:fs';
import { AppError } from '../errors/codes.ts';
import { allowedFrom, isTerminal, type TaskRecord, type TaskStatus } from '../domain/task.ts';
import type { VersionId } from '../domain/version-id.ts';
import type { Metrics } from '../domain/metrics.ts';
import { IDEMPOTENCY_TTL_MS } from '../domain/idempotency.ts';
import type { Keyspace, RedisClient } from './redis.ts';

const lua = (name: string) => fs.readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const CREATE_TASK = lua('create-task');
const TRANSITION = lua('transition');

type Scripted = RedisClient & {
  createTask(k1: string, k2: string, k3: string, k4: string, k5: string, k6: string, k7: string, k8: string, k9: string, ...argv: (string | number)[]): Promise<Array<number | string>>;
  transitionTask(k1: string, k2: string, k3: string, k4: string, k5: string, k6: string, ...argv: (string | number)[]): Promise<string[]>;
};

export interface NewTask {
  taskId: string;
  userId: number;
  /** Null for a job whose pipeline has no installed version: its worker fails it, refunded. */
  version: VersionId | null;
  pipeline: string;
  input: Record<string, unknown>;
  webhookUrl: string | null;
  cost: number;
  /** How long after completion its inputs, outputs and logs are kept. Default: the store's task retention. */
  retentionMs?: number;
  /** Ledger reason of the charge ("task", "job:hairstyle" ...). */
  chargeReason?: string;
  /** A job record written in the same step (job APIs). */
  job?: { jobId: string; fields: Record<string, string | number> };
  /**
   * Idempotency-Key (its sha256) and the request's fingerprint: see domain/idempotency.ts.
   * `inTaskRecord`: the task id was derived from the key (idempotentTaskId), so the task record is
   * the key's record and no record of its own is written; only when `keysInTaskRecords`.
   */
  idempotency?: { keyHash: string; fingerprint: string; inTaskRecord?: boolean };
  /** Cancel-After: the task is canceled if it has not ended this long after its creation. */
  cancelAfterMs?: number;
}

/** A create's outcome: the new task, or (same Idempotency-Key, same request) the first one's. */
export type CreateResult =
  | { created: true; createdMs: number; balance: number }
  | { created: false; taskId: string; jobId: string | null; cost: number; createdMs: number };

export interface TaskStoreSettings {
  /** Inputs, outputs and logs of a task are deleted this long after it ends (default 1 h). */
  retentionMs: number;
  /** The record itself (status, timings) expires this long after it ends. */
  recordTtlMs: number;
}

export type TransitionResult =
  | { result: 'ok'; previous: TaskStatus; atMs: number; record: TaskRecord }
  | { result: 'conflict'; current: TaskStatus }
  | { result: 'missing' };

export interface SuccessUpdate {
  outputKeys: string[];
  logs: string;
  predictTimeS: number;
}

const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));
const round3 = (v: number | null) => (v === null ? null : Math.round(v * 1000) / 1000);

export class TaskStore {
  private readonly redis: Scripted;

  constructor(
    redis: RedisClient,
    private readonly keys: Keyspace,
    private readonly settings: TaskStoreSettings,
    /** Counts charges, refunds and tasks ended (whichever process makes the change counts it). */
    private readonly metrics?: Metrics,
  ) {
    redis.defineCommand('createTask', { numberOfKeys: 9, lua: CREATE_TASK });
    redis.defineCommand('transitionTask', { numberOfKeys: 6, lua: TRANSITION });
    this.redis = redis as Scripted;
  }

  /**
   * Creates the record and charges `cost` credits atomically. Throws INSUFFICIENT_CREDITS, and
   * IDEMPOTENCY_KEY_REUSED when the key's first request was another one. A repeat of the key's
   * first request creates and charges nothing and answers that request's task.
   */
  async create(t: NewTask): Promise<CreateResult> {
    const taskFields: (string | number)[] = [
      'task_id', t.taskId,
      'user_id', t.userId,
      'version', t.version ?? '',
      'pipeline', t.pipeline,
      'input', JSON.stringify(t.input),
      'webhook_url', t.webhookUrl ?? '',
      'retention_ms', t.retentionMs ?? this.settings.retentionMs,
      ...(t.job ? ['job_id', t.job.jobId] : []),
    ];
    const jobFields = t.job ? Object.entries(t.job.fields).flat() : [];
    const reply = await this.redis.createTask(
      this.keys.task(t.taskId),
      this.keys.credits(t.userId),
      this.keys.userTasks(t.userId),
      this.keys.ledger(t.userId),
      this.keys.enqueueOutbox(),
      t.job ? this.keys.job(t.job.jobId) : this.keys.job('-'),
      this.keys.activeTasks(),
      this.keys.idempotency(t.userId, t.idempotency?.keyHash ?? '-'),
      this.keys.deadlines(),
      t.taskId,
      t.cost,
      this.settings.recordTtlMs,
      t.chargeReason ?? 'task',
      taskFields.length / 2,
      jobFields.length / 2,
      t.idempotency?.fingerprint ?? '',
      t.idempotency?.inTaskRecord ? 0 : IDEMPOTENCY_TTL_MS,
      t.cancelAfterMs ?? 0,
      ...taskFields,
      ...jobFields,
    );
    const [code, balance] = reply as [number, number];
    if (code === -3) {
      const [, cost, taskId, jobId, createdMs] = reply as [number, number, string, string, number];
      return { created: false, taskId, jobId: jobId || null, cost, createdMs };
    }
    if (code === -4) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was already used with a different request (another body, files or operation); use a new key for a new request');
    }
    if (code === -1) {
      throw new AppError('INSUFFICIENT_CREDITS', `this costs ${t.cost} credits; the balance is ${balance}`, { balance, cost: t.cost });
    }
    if (code === -2) throw new AppError('INTERNAL', `task id collision: ${t.taskId}`);
    this.metrics?.taskCharged(t.version, t.cost);
    return { created: true, createdMs: code, balance };
  }

  async get(taskId: string): Promise<TaskRecord | null> {
    return parseRecord(taskId, await this.redis.hgetall(this.keys.task(taskId)));
  }


  /** `userId`, when the caller knows it, saves a round trip (the refund keys are the user's). */
  private async transition(taskId: string, to: TaskStatus, refund: boolean, fields: (string | number)[], userId?: number): Promise<TransitionResult> {
    let uid = userId;
    if (uid === undefined) {
      const stored = await this.redis.hget(this.keys.task(taskId), 'user_id');
      if (stored === null) return { result: 'missing' };
      uid = Number(stored);
    }
    const r = await this.redis.transitionTask(
      this.keys.task(taskId),
      this.keys.credits(uid),
      this.keys.ledger(uid),
      this.keys.retention(),
      this.keys.webhookOutbox(),
      this.keys.activeTasks(),
      to,
      allowedFrom(to).join(','),
      isTerminal(to) ? '1' : '0',
      refund ? '1' : '0',
      this.settings.recordTtlMs,
      this.keys.taskEndedChannel(),
      ...fields,
    );
    if (r[0] === 'ok') {
      const h: Record<string, string> = {};
      for (let i = 3; i + 1 < r.length; i += 2) h[r[i]!] = r[i + 1]!;
      const record = parseRecord(taskId, h)!;
      if (isTerminal(to)) {
        // Terminal states never change, so this transition is the one end (and the one refund).
        this.metrics?.taskEnded(record);
        if (refund) this.metrics?.taskRefunded(record.version, record.cost);
      }
      return { result: 'ok', previous: r[1] as TaskStatus, atMs: Number(r[2]), record };
    }
    if (r[0] === 'conflict') return { result: 'conflict', current: r[1] as TaskStatus };
    return { result: 'missing' };
  }

  /** starting | processing -> processing (a worker takes, or re-takes, the task); gives the record. */
  claim(taskId: string, userId?: number): Promise<TransitionResult> {
    return this.transition(taskId, 'processing', false, [], userId);
  }

  /** processing -> succeeded. */
  succeed(taskId: string, u: SuccessUpdate, userId?: number): Promise<TransitionResult> {
    return this.transition(
      taskId,
      'succeeded',
      false,
      ['output_keys', JSON.stringify(u.outputKeys), 'logs', u.logs, 'predict_time', u.predictTimeS, 'error', ''],
      userId,
    );
  }

  /** starting | processing -> failed, refunding the task's cost (once, whoever fails it). */
  fail(taskId: string, error: string, logs?: string, userId?: number): Promise<TransitionResult> {
    return this.transition(taskId, 'failed', true, ['error', error, ...(logs ? ['logs', logs] : [])], userId);
  }

  /**
   * starting | processing -> canceled, refunding the task's cost. `why` (a deadline cancel) is
   * written to the record's error and logs; a cancel by its owner leaves them as they are.
   */
  cancel(taskId: string, userId?: number, why?: { error: string; logs?: string }): Promise<TransitionResult> {
    const fields = why ? ['error', why.error, ...(why.logs ? ['logs', why.logs] : [])] : [];
    return this.transition(taskId, 'canceled', true, fields, userId);
  }

  /**
   * Whether a task record can be its key's record (NewTask.idempotency.inTaskRecord): records
   * outlive the key's 24 h (TASK_RECORD_TTL_DAYS >= 1, the default 7), so the key is remembered
   * at least that long, and as long as the task's record is kept.
   */
  get keysInTaskRecords(): boolean {
    return this.settings.recordTtlMs >= IDEMPOTENCY_TTL_MS;
  }

  /** Whether the user's Idempotency-Key (its sha256) has created something in its 24 hours (a job's own record). */
  async idempotencyKeyUsed(userId: number, keyHash: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.idempotency(userId, keyHash))) === 1;
  }

  /**
   * For a waiter (Prefer: wait): marks the task so that its terminal transition publishes its id
   * (see transition.lua), unless it has ended already. One step, so an end is either seen here or
   * published after. Returns the status now (null: no such record).
   */
  async watchEnd(taskId: string): Promise<TaskStatus | null> {
    const status = await this.redis.eval(
      "local s = redis.call('HGET', KEYS[1], 'status') if s and s ~= 'succeeded' and s ~= 'failed' and s ~= 'canceled' then redis.call('HSET', KEYS[1], 'notify', '1') end return s",
      1,
      this.keys.task(taskId),
    );
    return (status || null) as TaskStatus | null;
  }

  /**
   * Retention: drops the task's input, output list and logs; keeps status and timings and notes
   * when it happened. The caller deletes the blobs. Idempotent.
   */
  async purge(taskId: string): Promise<void> {
    // A record that already expired stays gone (HSET would recreate it without an expiry).
    await this.redis.eval(
      "if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HDEL', KEYS[1], 'input', 'output_keys', 'logs'); redis.call('HSET', KEYS[1], 'purged_ms', ARGV[1]) end",
      1,
      this.keys.task(taskId),
      Date.now(),
    );
  }

  /** Newest-first page of a user's task ids: created-ms scores, ties broken by id (descending). */
  async listIds(userId: number, limit: number, after?: { createdMs: number; taskId: string }): Promise<Array<{ taskId: string; createdMs: number }>> {
    const key = this.keys.userTasks(userId);
    const out: Array<{ taskId: string; createdMs: number }> = [];
    let max = after ? String(after.createdMs) : '+inf';
    let offset = 0;
    while (out.length < limit) {
      const batch = limit + 16;
      const rows = await this.redis.zrevrangebyscore(key, max, '-inf', 'WITHSCORES', 'LIMIT', offset, batch);
      for (let i = 0; i + 1 < rows.length && out.length < limit; i += 2) {
        const taskId = rows[i]!;
        const createdMs = Number(rows[i + 1]);
        // Skip what the cursor already covered: same ms and an id at or above the cursor's.
        if (after && createdMs === after.createdMs && taskId >= after.taskId) continue;
        out.push({ taskId, createdMs });
      }
      if (rows.length < batch * 2) break;
      offset += batch;
    }
    return out;
  }

  /** Records for ids (missing ones, expired, dropped from the index). */
  async getMany(userId: number, ids: string[]): Promise<TaskRecord[]> {
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.hgetall(this.keys.task(id));
    const res = (await pipe.exec()) ?? [];
    const records: TaskRecord[] = [];
    const gone: string[] = [];
    res.forEach(([, h], i) => {
      const r = parseRecord(ids[i]!, (h ?? {}) as Record<string, string>);
      if (r) records.push(r);
      else gone.push(ids[i]!);
    });
    if (gone.length) await this.redis.zrem(this.keys.userTasks(userId), ...gone);
    return records;
  }

  /** Cheap status read, used by workers to stop early on cancel. */
  async status(taskId: string): Promise<TaskStatus | null> {
    return (await this.redis.hget(this.keys.task(taskId), 'status')) as TaskStatus | null;
  }
}

function parseRecord(taskId: string, h: Record<string, string>): TaskRecord | null {
  if (!h.status) return null;
  return {
    taskId: h.task_id ?? taskId,
    userId: Number(h.user_id),
    version: (h.version || null) as VersionId | null,
    pipeline: h.pipeline ?? '',
    jobId: h.job_id || null,
    input: h.input ? (JSON.parse(h.input) as Record<string, unknown>) : {},
    webhookUrl: h.webhook_url || null,
    status: h.status as TaskStatus,
    error: h.error || null,
    logs: h.logs || null,
    outputKeys: h.output_keys ? (JSON.parse(h.output_keys) as string[]) : null,
    predictTimeS: round3(num(h.predict_time)),
    totalTimeS: round3(num(h.total_time)),
    createdMs: Number(h.created_ms),
    completedMs: num(h.completed_ms),
    cost: Number(h.cost ?? 0),
    attempts: Number(h.attempts ?? 0),
    purgedMs: num(h.purged_ms),
    deadlineMs: num(h.deadline_ms),
  };
}
