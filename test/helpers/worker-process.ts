// Starts `src/main/worker.ts` (what `npm run worker` runs) or `src/main/api.ts` as its own process,
// for crash, restart and outage tests. A worker resolves once it logs "worker ready", with the id it
// registered under; an API once it answers.
import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export type WorkerProcess = ChildProcess & {
  exited: Promise<number | null>;
  /** Its entry in the worker registry (heartbeats), from the "worker ready" line. */
  workerId: string;
  /** Everything it printed so far (stdout: its JSON log lines). */
  output: { stdout: string; stderr: string };
};

export type ApiProcess = ChildProcess & { exited: Promise<number | null>; output: { stdout: string; stderr: string } };

function spawnEntry(entry: string, env: Record<string, string>, onLine: (line: string) => void) {
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    // info: readiness is read from log lines, and outage tests count the state-change lines.
    env: { ...process.env, ...env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const output = { stdout: '', stderr: '' };
  child.stderr!.on('data', (d: Buffer) => (output.stderr += d.toString()));
  readline.createInterface({ input: child.stdout! }).on('line', (line) => {
    output.stdout += `${line}\n`;
    if (process.env.DEBUG_WORKERS) console.log(`[${entry}]`, line);
    onLine(line);
  });
  return { child, exited, output };
}

/** `onLine`: each stdout line as it comes, before the worker is ready too (a test waiting for a log line). */
export async function spawnWorkerProcess(env: Record<string, string>, timeoutMs = 20_000, onLine?: (line: string) => void): Promise<WorkerProcess> {
  let ready!: (id: string) => void;
  const readyLine = new Promise<string>((r) => (ready = r));
  const { child, exited, output } = spawnEntry('src/main/worker.ts', env, (line) => {
    onLine?.(line);
    if (line.includes('"worker ready"')) ready(String(JSON.parse(line).workerId));
  });
  const workerId = await new Promise<string>((resolve, reject) => {
    readyLine.then(resolve);
    exited.then((code) => reject(new Error(`worker exited (${code}) before ready: ${output.stderr}`)));
    setTimeout(() => reject(new Error(`worker not ready after ${timeoutMs / 1000} s: ${output.stderr}`)), timeoutMs).unref();
  });
  return Object.assign(child, { exited, workerId, output });
}

/** Starts `src/main/api.ts` (what `npm run api` runs); resolves once it answers /health/live. */
export async function spawnApiProcess(env: Record<string, string>, baseUrl: string, timeoutMs = 20_000): Promise<ApiProcess> {
  const { child, exited, output } = spawnEntry('src/main/api.ts', env, () => {});
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`api exited (${child.exitCode}) before answering: ${output.stderr}`);
    const live = await fetch(`${baseUrl}/health/live`).then((r) => r.ok, () => false);
    if (live) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`api not answering after ${timeoutMs / 1000} s: ${output.stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return Object.assign(child, { exited, output });
}
