// A worker process's /metrics (METRICS_PORT): a bare node:http server over the process's registry.
// The API serves the same text at its own /metrics route.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Metrics } from '../domain/metrics.ts';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Listens on host:port (port 0 picks a free one); GET /metrics answers the scrape, anything else 404. */
export async function startMetricsServer(metrics: Metrics, port: number, host: string): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    metrics.scrape().then(
      (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(body),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`scrape failed: ${e.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
