// The service on a real Redis Cluster (three masters, test/helpers/redis-cluster.ts): the API in
// this process and a worker in its own process (`npm run worker`), both on
// REDIS_URL=redis+cluster://..., run tasks end to end: create, charge, queue, run, read back, list,
// webhook delivery, retention purge, Prefer: wait (pub/sub) and an Idempotency-Key repeat; a foreign
// front submits by the queue contract; and every key
// the service wrote carries the deployment's hash tag, so all of them live in one slot.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectRedis } from '../../src/store/redis.ts';
import { startHarness, FACE_VERSION, type Harness } from '../helpers/harness.ts';
import { spawnWorkerProcess, type WorkerProcess } from '../helpers/worker-process.ts';
import { submitByContract } from '../helpers/contract-producer.ts';
import { waitFor } from '../helpers/wait.ts';

const url = inject('redisClusterUrl');
if (!url) console.warn(`cluster tests skipped: ${inject('redisClusterSkip')}`);

describe.skipIf(!url)('on a Redis Cluster', () => {
  let h: Harness;
  let worker: WorkerProcess | undefined;
  beforeAll(async () => {
    // Short retention, so the purge is seen within the test.
    h = await startHarness({ worker: false, env: { REDIS_URL: url, TASK_RETENTION_MS: '1500' } });
    worker = await spawnWorkerProcess(h.env, 60_000);
  }, 90_000);
  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      worker.kill('SIGTERM');
      await worker.exited;
    }
    await h?.close();
  });

  it('runs tasks end to end: created, charged, run by a worker process, read back and listed', async () => {
    const { token, userId } = await h.user(10);
    const ids = await Promise.all([1, 2, 3].map(() => h.createTask(token, { image: h.fixtures.url('/files/group-four.jpg') })));
    for (const t of await Promise.all(ids.map((id) => h.waitForTask(token, id)))) {
      expect(t).toMatchObject({ status: 'succeeded', version: FACE_VERSION, error: null });
      expect(t.output).toHaveLength(2);
      // Read at once: retention is short here.
      const file = await fetch(t.output[0], { headers: { authorization: `Bearer ${token}` } });
      expect(file.status).toBe(200);
      expect((await file.arrayBuffer()).byteLength).toBeGreaterThan(100);
    }
    const list = await h.call('GET', '/api/tasks/v1/list?limit=10', { token });
    expect(list.status).toBe(200);
    expect(list.json.result.tasks.map((t: { task_id: string }) => t.task_id).sort()).toEqual([...ids].sort());
    expect(await h.services.accounts.balance(userId)).toBe(7);
    // The worker process registered itself, and readiness (which reads the registry) says so.
    expect((await h.call('GET', '/health/ready')).status).toBe(200);
  });

  it('delivers a webhook and purges the task\'s data when its retention ends', async () => {
    const received: Array<{ id: string; status: string }> = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        const j = JSON.parse(body);
        received.push({ id: j.task_id, status: j.status });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    try {
      const { token } = await h.user(5);
      const hook = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
      const id = await h.createTask(token, { image: h.fixtures.url('/files/group-four.jpg') }, { webhook_url: hook });
      await waitFor(() => received.length > 0, { what: 'the webhook' });
      expect(received[0]).toEqual({ id, status: 'succeeded' });
      const key = `${h.config.redisKeyPrefix}:task:${id}`;
      await waitFor(async () => (await h.services.redis.hget(key, 'purged_ms')) !== null, { what: 'the retention purge' });
      expect(await h.services.redis.hget(key, 'output_keys')).toBeNull();
      expect(await h.services.redis.hget(key, 'status')).toBe('succeeded');
    } finally {
      receiver.close();
    }
  });

  it('Prefer: wait answers with the ended record (pub/sub on a cluster); an Idempotency-Key repeat gets the same task', async () => {
    const { token, userId } = await h.user(5);
    const body = { version: FACE_VERSION, input: { image: h.fixtures.url('/files/group-four.jpg') } };
    const headers = { prefer: 'wait=20', 'idempotency-key': `k-${Date.now()}` };
    const first = await h.call('POST', '/api/tasks/v1/create', { token, body, headers });
    expect(first.status).toBe(200);
    expect(first.json.result).toMatchObject({ status: 'succeeded', user_id: userId });
    const again = await h.call('POST', '/api/tasks/v1/create', { token, body, headers: { 'idempotency-key': headers['idempotency-key'] } });
    expect(again.json.result.task_id).toBe(first.json.result.task_id);
    expect(await h.services.accounts.balance(userId)).toBe(4);
  });

  it('a foreign front submits by the queue contract, with a cluster client', async () => {
    const { token, userId } = await h.user(2);
    const { taskId, result } = await submitByContract({
      redisUrl: url,
      prefix: h.env.REDIS_PREFIX!,
      userId,
      version: FACE_VERSION,
      pipeline: 'face-detection',
      cost: 1,
      input: { image: h.fixtures.url('/files/group-four.jpg') },
    });
    expect(result[1]).toBe(1);
    expect(await h.waitForTask(token, taskId)).toMatchObject({ status: 'succeeded', user_id: userId });
    expect(await h.services.accounts.balance(userId)).toBe(1);
  });

  it('every key the service wrote is under its hash tag, so all of them are on one node', async () => {
    const ports = url.replace('redis+cluster://', '').split(',').map((hp) => Number(hp.split(':')[1]));
    const perNode: string[][] = [];
    for (const port of ports) {
      const node = connectRedis(`redis://127.0.0.1:${port}`);
      try {
        const keys: string[] = [];
        let cursor = '0';
        do {
          const [next, batch] = await node.scan(cursor, 'COUNT', 1000);
          cursor = next;
          keys.push(...batch);
        } while (cursor !== '0');
        perNode.push(keys);
      } finally {
        node.disconnect();
      }
    }
    const all = perNode.flat();
    const mine = all.filter((k) => k.startsWith(`${h.config.redisKeyPrefix}:`));
    expect(mine.length).toBeGreaterThan(10);
    // Nothing outside a hash tag (the records, the user keys and BullMQ's queues included).
    expect(all.filter((k) => !/^\{[^}]+\}:/.test(k))).toEqual([]);
    expect(perNode.filter((keys) => keys.some((k) => k.startsWith(`${h.config.redisKeyPrefix}:`)))).toHaveLength(1);
    expect(mine.some((k) => k.startsWith(`${h.config.redisKeyPrefix}:tasks:`))).toBe(true);
  });
});
