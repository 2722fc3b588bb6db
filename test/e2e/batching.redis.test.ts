// Dynamic batching through the whole service: a worker whose one inference thread runs 8 tasks at
// once (THREAD_TASKS=8) takes 16 face-detection tasks of the batched version created through the
// task API; every task succeeds with the faces the unbatched version finds, and the thread's
// detector calls were batched (fewer model runs than tasks).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../helpers/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { THREAD_TASKS: '8', WORKER_CONCURRENCY: '1', WARM_VERSIONS: 'face-detection-blazeface-batched' } });
}, 60_000);
afterAll(() => h?.close());

describe('dynamic batching end to end', () => {
  it('16 tasks at once through a worker with THREAD_TASKS=8: all succeed, their detector calls batched', async () => {
    const batched = h.services.registry.byName('face-detection-blazeface-batched')!.id;
    const plain = h.services.registry.byName('face-detection-blazeface-tfjs')!.id;
    const u = await h.user(100);
    const create = async (version: string) => {
      const r = await h.call('POST', '/api/tasks/v1/create', { token: u.token, body: { version, input: { image: h.fixtures.url('/files/group-four.jpg') } } });
      expect(r.status).toBe(200);
      return r.json.result.task_id as string;
    };
    const ids = await Promise.all(Array.from({ length: 16 }, () => create(batched)));
    const done = await Promise.all(ids.map((id) => h.waitForTask(u.token, id, undefined, 60_000)));
    expect(done.map((t) => t.status)).toEqual(Array(16).fill('succeeded'));
    const faces = async (t: { output: string[] }) => (await h.call('GET', t.output.find((o) => o.endsWith('faces.json'))!, { token: u.token })).json.faces as unknown[];
    const reference = await faces(await h.waitForTask(u.token, await create(plain), undefined, 60_000));
    expect(reference.length).toBe(4);
    for (const t of done) expect((await faces(t)).length).toBe(reference.length);
    const stats = h.worker!.pool.batchStats();
    expect(stats.inferences).toBeGreaterThanOrEqual(16);
    expect(stats.executions).toBeLessThan(stats.inferences);
  }, 120_000);
});
