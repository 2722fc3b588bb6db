// A real Redis Cluster on loopback for the `cluster` test project: three redis-server processes in
// cluster mode (no replicas, no persistence), each on a free port in a folder of its own, joined
// with `redis-cli --cluster create` and waited on until every node reports cluster_state:ok.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../src/main/embedded-redis.ts';

const run = promisify(execFile);

export interface LocalCluster {
  /** `redis+cluster://127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3`, what REDIS_URL takes. */
  url: string;
  ports: number[];
  stop(): Promise<void>;
}

/** Thrown when this redis-server cannot run in cluster mode: the project is skipped, saying so. */
export class ClusterUnsupported extends Error {}

export async function startLocalCluster(nodes = 3): Promise<LocalCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'iw-test-cluster-'));
  const children: ChildProcess[] = [];
  const ports: number[] = [];
  const stop = async () => {
    await Promise.all(
      children.map((c) => new Promise<void>((resolve) => {
        if (c.exitCode !== null || c.signalCode !== null) return resolve();
        c.once('exit', () => resolve());
        c.kill('SIGTERM');
      })),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < nodes; i++) {
      const port = await freePort();
      const nodeDir = path.join(dir, String(port));
      fs.mkdirSync(nodeDir);
      let stderr = '';
      const child = spawn(
        'redis-server',
        [
          '--port', String(port),
          '--bind', '127.0.0.1',
          '--dir', nodeDir,
          '--cluster-enabled', 'yes',
          '--cluster-config-file', path.join(nodeDir, 'nodes.conf'),
          '--cluster-node-timeout', '5000',
          '--save', '',
          '--appendonly', 'no',
          '--loglevel', 'warning',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      child.stdout!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      children.push(child);
      ports.push(port);
      await waitForNode(port, child, () => stderr);
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes']);
    // Every node must see the whole slot map before clients use it (the first client's slot map
    // comes from whichever node it asks).
    const deadline = Date.now() + 20_000;
    for (const port of ports) {
      for (;;) {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
        if (/cluster_state:ok/.test(stdout) && /cluster_slots_assigned:16384/.test(stdout)) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${port} not ok after 20 s:\n${stdout}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return { url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`, ports, stop };
}

async function waitForNode(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) {
      const text = output();
      // A redis-server built without cluster support, or one that refuses the cluster options.
      if (/cluster/i.test(text)) throw new ClusterUnsupported(`redis-server does not run in cluster mode here: ${text.trim()}`);
      throw new Error(`redis-server on port ${port} exited (${child.exitCode}): ${text.trim()}`);
    }
    const pong = await run('redis-cli', ['-p', String(port), 'ping']).then((r) => r.stdout.trim(), () => '');
    if (pong === 'PONG') return;
    if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not answer within 10 s: ${output().trim()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
