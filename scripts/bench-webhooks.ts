// npm run bench -- webhooks
//   1. delivery latency: task completion (Redis clock) -> the receiver has the signed POST, over
//      sequential tasks, with a receiver that answers 200 at once
//   2. retry timings: a receiver that always answers 500, default schedule scaled to a 20 s window
//      (base 500 ms): when each attempt landed, relative to completion
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../src/domain/logger.ts';
import { createWorker } from '../src/main/worker-root.ts';
import { benchSetup, stats } from './bench-setup.ts';

const { median, pct, fmt } = stats;
const { config, services, teardown } = await benchSetup({ WEBHOOK_WINDOW_MS: '20000', WEBHOOK_BASE_DELAY_MS: '500' });
const worker = createWorker(config, services, config.redisUrl!, silentLogger);
await worker.start();
services.startBackground();

const photo = (await import('node:fs')).readFileSync('test/fixtures/astronaut.png');
const files = http.createServer((_req, res) => res.writeHead(200).end(photo));
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const imageUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/a.png`;

let status = 200;
const arrivals = new Map<string, number[]>();
const rx = http.createServer((req, res) => {
  const id = String(req.headers['webhook-id']);
  arrivals.set(id, [...(arrivals.get(id) ?? []), Date.now()]);
  req.resume();
  req.on('end', () => res.writeHead(status).end());
});
await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
const hookUrl = `http://127.0.0.1:${(rx.address() as AddressInfo).port}/hook`;

const version = services.registry.byName('face-detection-blazeface')!;
const { userId } = await services.accounts.createKey();
await services.accounts.addCredits(userId, 1e6, 'bench');
let n = 0;
async function runTask(): Promise<{ eventId: string; completedMs: number }> {
  const taskId = `bench${String(n++).padStart(27, '0')}`;
  await services.submitter.submit({ taskId, userId, version: version.id, pipeline: 'face-detection', input: { image: imageUrl }, webhookUrl: hookUrl, cost: 1 });
  for (;;) {
    const r = await services.tasks.get(taskId);
    if (r?.completedMs) return { eventId: `evt_${taskId}_${r.status}`, completedMs: r.completedMs };
    await new Promise((res) => setTimeout(res, 2));
  }
}
async function arrival(eventId: string, count = 1): Promise<number[]> {
  for (;;) {
    const a = arrivals.get(eventId);
    if (a && a.length >= count) return a;
    await new Promise((res) => setTimeout(res, 1));
  }
}

const latency: number[] = [];
for (let i = 0; i < 30; i++) {
  const { eventId, completedMs } = await runTask();
  latency.push((await arrival(eventId))[0]! - completedMs);
}
console.log(`bench webhooks: window ${config.webhook.windowMs} ms, base delay ${config.webhook.baseDelayMs} ms, timeout ${config.webhook.timeoutMs} ms`);
console.log(`1. delivery latency after completion   median ${fmt(median(latency))}  p90 ${fmt(pct(latency, 90))}  (n=30, receiver answers 200)`);

status = 500;
const { eventId, completedMs } = await runTask();
await new Promise((res) => setTimeout(res, config.webhook.windowMs + 2_000));
const offsets = (arrivals.get(eventId) ?? []).map((t) => t - completedMs);
console.log(`2. retry timings, receiver always 500: ${offsets.length} attempts at +${offsets.map((o) => (o / 1000).toFixed(2)).join(' s, +')} s after completion (window ${config.webhook.windowMs / 1000} s)`);

await worker.close();
files.close();
rx.close();
await teardown();
