// Starts `src/main/worker.ts` as its own process (what `npm run worker` runs), for crash and
// restart tests. Resolves once it logs "worker ready", with the id it registered under.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export type WorkerProcess = ChildProcess & {
  exited: Promise<number | null>;
  /** Its entry in the worker registry (heartbeats), from the "worker ready" line. */
  workerId: string;
};

export async function spawnWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/worker.ts'], {
    // info: readiness is read from the "worker ready" log line.
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const workerId = await new Promise<string>((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      if (process.env.DEBUG_WORKERS) console.log('[worker]', line);
      if (line.includes('"worker ready"')) resolve(String(JSON.parse(line).workerId));
    });
    exited.then((code) => reject(new Error(`worker exited (${code}) before ready: ${stderr}`)));
    setTimeout(() => reject(new Error(`worker not ready after 20 s: ${stderr}`)), 20_000).unref();
  });
  return Object.assign(child, { exited, workerId });
}
