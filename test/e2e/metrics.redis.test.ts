// Prometheus metrics end to end: real face-detection tasks (one succeeds, one fails on a non-image
// input) through the API and the in-process worker; /metrics on the API and on the worker's
// METRICS_PORT (one registry in one process) are scraped before and after, and the counters must
// move by exactly what the tasks did. No label may carry a task or user id.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startHarness, type Harness } from '../helpers/harness.ts';
import { waitFor } from '../helpers/wait.ts';

const VERSION = 'face-detection-blazeface';

let h: Harness;
let metricsPort: number;

beforeAll(async () => {
  metricsPort = await freePort();
  // Short webhook backoff, so the webhook case's retry comes at once.
  h = await startHarness({ env: { METRICS_PORT: String(metricsPort), WEBHOOK_BASE_DELAY_MS: '20' } });
});
afterAll(() => h?.close());

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the subset prom-client writes). */
function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`unparsable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

async function scrape(url = `${h.baseUrl}/metrics`) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  const samples = parse(await res.text());
  /** The sample's value (0 when absent: a counter not yet touched). */
  const value = (name: string, labels: Record<string, string> = {}) =>
    samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value ?? 0;
  return { samples, value };
}

describe('GET /metrics', () => {
  it('counts tasks ended, credits, stages and queue wait by version; no ids in labels', async () => {
    const { token, userId } = await h.user(10);
    const before = await scrape();

    const goodId = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') });
    const good = await h.waitForTask(token, goodId);
    expect(good.status).toBe('succeeded');
    const badId = await h.createTask(token, { image: h.fixtures.url('/text/not-an-image.jpg') });
    const bad = await h.waitForTask(token, badId);
    expect(bad.status).toBe('failed');
    // The record ends before the worker's attempt returns: wait for the attempts to finish.
    await waitFor(async () => (await scrape()).value('iw_tasks_in_flight') === 0, { what: 'no task in flight' });

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => after.value(name, labels) - before.value(name, labels);
    expect(delta('iw_tasks_ended_total', { version: VERSION, status: 'succeeded' })).toBe(1);
    expect(delta('iw_tasks_ended_total', { version: VERSION, status: 'failed' })).toBe(1);
    expect(delta('iw_task_duration_seconds_count', { version: VERSION, status: 'succeeded' })).toBe(1);
    expect(delta('iw_credits_charged_total', { version: VERSION })).toBe(2);
    expect(delta('iw_credits_refunded_total', { version: VERSION })).toBe(1);
    expect(delta('iw_task_queue_wait_seconds_count', { version: VERSION })).toBe(2);
    // Both attempts downloaded; only the good one reached the model.
    expect(delta('iw_stage_duration_seconds_count', { version: VERSION, stage: 'download' })).toBe(2);
    expect(delta('iw_stage_duration_seconds_count', { version: VERSION, stage: 'inference' })).toBe(1);
    expect(delta('iw_stage_duration_seconds_count', { version: VERSION, stage: 'store' })).toBe(1);
    expect(await h.services.accounts.balance(userId)).toBe(9);

    // Scrape-time gauges: the pool's counters, the queue by state, the process's defaults.
    // (Batch counts stay 0 here: THREAD_TASKS=1 runs no batcher; test/e2e/batching covers the counts.)
    const pool = h.worker!.pool;
    expect(after.value('iw_batch_inferences')).toBe(pool.batchStats().inferences);
    expect(after.value('iw_batch_executions')).toBe(pool.batchStats().executions);
    expect(after.value('iw_models_loaded')).toBe(pool.modelStats().graphs);
    expect(after.value('iw_models_loaded')).toBeGreaterThanOrEqual(1);
    expect(after.value('iw_model_bytes')).toBe(pool.modelStats().bytes);
    expect(after.value('iw_model_bytes')).toBeGreaterThan(0);
    expect(after.value('iw_model_loads')).toBe(pool.modelStats().loads);
    const states = after.samples.filter((s) => s.name === 'iw_queue_jobs').map((s) => s.labels.state).sort();
    expect(states).toEqual(['active', 'delayed', 'failed', 'waiting']);
    expect(after.samples.some((s) => s.name === 'nodejs_eventloop_lag_seconds')).toBe(true);
    expect(after.samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);

    // Bounded labels: versions by name, never a task id, a user id or a version id.
    const names = new Set([...h.services.registry.versions.values()].map((v) => v.manifest.name));
    for (const s of after.samples) {
      // (nodejs_version_info's "version" is node's own.)
      if (s.name.startsWith('iw_') && s.labels.version !== undefined) expect([...names, 'none', 'unknown']).toContain(s.labels.version);
      for (const [k, v] of Object.entries(s.labels)) {
        if (k === 'le' || k === 'quantile') continue;
        expect(v).not.toMatch(/[0-9a-f]{32}/);
        expect([goodId, badId, String(userId), token]).not.toContain(v);
      }
    }
  });

  it("serves the same registry on the worker's METRICS_PORT", async () => {
    const api = await scrape();
    const worker = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    const ended = (s: typeof api) => s.samples.filter((x) => x.name === 'iw_tasks_ended_total').map((x) => [x.labels, x.value]);
    expect(ended(worker)).toEqual(ended(api));
    expect(worker.value('iw_models_loaded')).toBeGreaterThanOrEqual(1);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('counts webhook delivery attempts by outcome', async () => {
    // A receiver that answers 500 to the first delivery and 204 to the next.
    // A path of its own: the OS may hand out a port another test's receiver just released, whose
    // events (still being retried) must not count here.
    let seen = 0;
    const path = `/hook/${randomUUID()}`;
    const rx = http.createServer((req, res) => {
      req.resume();
      if (req.url !== path) return void res.writeHead(410).end();
      req.on('end', () => res.writeHead(seen++ === 0 ? 500 : 204).end());
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    try {
      const { token } = await h.user(10);
      const before = await scrape();
      const url = `http://127.0.0.1:${(rx.address() as AddressInfo).port}${path}`;
      const id = await h.createTask(token, { image: h.fixtures.url('/files/astronaut.png') }, { webhook_url: url });
      expect((await h.waitForTask(token, id)).status).toBe('succeeded');
      const delta = async (outcome: string) =>
        (await scrape()).value('iw_webhook_deliveries_total', { outcome }) - before.value('iw_webhook_deliveries_total', { outcome });
      await waitFor(async () => (await delta('delivered')) === 1, { what: 'the delivery', describe: () => delta('delivered') });
      expect(await delta('rejected')).toBe(1);
      expect(await delta('error')).toBe(0);
      expect(seen).toBe(2);
    } finally {
      await new Promise<void>((r) => rx.close(() => r()));
    }
  });
});
