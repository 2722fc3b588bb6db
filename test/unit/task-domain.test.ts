import { describe, expect, it } from 'vitest';
import { TASK_STATUSES, TRANSITIONS, allowedFrom, isTerminal, toTaskView, type TaskRecord } from '../../src/domain/task.ts';
import type { VersionId } from '../../src/domain/version-id.ts';

describe('task statuses', () => {
  it('allows exactly the documented transitions', () => {
    expect(allowedFrom('processing').sort()).toEqual(['processing', 'starting']);
    expect(allowedFrom('succeeded')).toEqual(['processing']);
    expect(allowedFrom('failed').sort()).toEqual(['processing', 'starting']);
    expect(allowedFrom('canceled').sort()).toEqual(['processing', 'starting']);
    expect(allowedFrom('starting')).toEqual([]);
  });

  it('terminal states never change', () => {
    for (const s of TASK_STATUSES) expect(isTerminal(s)).toBe(TRANSITIONS[s].length === 0);
  });

  it('the view has the spec fields, seconds, and output URLs', () => {
    const r: TaskRecord = {
      taskId: 't1', userId: 3, version: 'v'.repeat(64) as VersionId, pipeline: 'face-detection', jobId: null, input: { image: 'http://x' }, webhookUrl: null,
      status: 'succeeded', error: null, logs: 'decode: 1.0 ms', outputKeys: ['tasks/t1/a.json'], predictTimeS: 0.012,
      totalTimeS: 0.2, createdMs: 1_700_000_000_999, completedMs: 1_700_000_001_200, cost: 1, attempts: 1, purgedMs: null, deadlineMs: null,
    };
    expect(toTaskView(r, (k) => `https://h/files/${k}`)).toEqual({
      task_id: 't1', user_id: 3, version: 'v'.repeat(64), error: null, total_time: 0.2, predict_time: 0.012,
      logs: 'decode: 1.0 ms', output: ['https://h/files/tasks/t1/a.json'], status: 'succeeded',
      create_at: 1_700_000_000, completed_at: 1_700_000_001,
    });
  });
});
