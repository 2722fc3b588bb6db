// The stage timer is where a run stops when its task is canceled at its deadline (or handed back):
// a stage in progress finishes, the next one does not start.
import { describe, expect, it } from 'vitest';
import { stageTimer } from '../../src/domain/stage-timer.ts';

describe('stageTimer with a stop signal', () => {
  it('lets the stage in progress finish and stops at the next stage boundary with the signal reason', async () => {
    const stop = new AbortController();
    const t = stageTimer(stop.signal);
    const ran: string[] = [];
    await t.time('decode', () => ran.push('decode'));
    await t.infer('inference', async () => {
      stop.abort(new Error('deadline'));
      ran.push('inference'); // the stage that was running when the stop came completes
    });
    await expect(t.time('postprocess', () => ran.push('postprocess'))).rejects.toThrow('deadline');
    expect(ran).toEqual(['decode', 'inference']);
    expect(t.stages.map(([s]) => s)).toEqual(['decode', 'inference']);
  });

  it('without a signal, runs every stage', async () => {
    const t = stageTimer();
    await t.time('a', () => 1);
    await t.time('b', () => 2);
    expect(t.stages.map(([s]) => s)).toEqual(['a', 'b']);
  });
});
