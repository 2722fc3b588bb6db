// Version ID -> manifest. Manifests are committed JSON files under <modelsDir>/versions; graphs are
// fetched into <modelsDir>/cache/graphs/<sha256>.onnx by `npm run models -- fetch`.
import fs from 'node:fs';
import path from 'node:path';
import { computeVersionId, type VersionId } from '../domain/version-id.ts';
import { ManifestSchema, type Manifest } from './manifest.ts';

export interface ModelVersion {
  readonly id: VersionId;
  readonly manifest: Manifest;
  /** Manifest file it was read from. */
  readonly file: string;
}

export interface Registry {
  readonly modelsDir: string;
  readonly versions: ReadonlyMap<VersionId, ModelVersion>;
  get(id: VersionId): ModelVersion | undefined;
  byName(name: string): ModelVersion | undefined;
  /**
   * The version the job APIs run for a pipeline: `preferred` (a name or id) when given, else the
   * first of that pipeline's versions by name. Undefined when none is installed.
   */
  defaultFor(pipeline: string, preferred?: string): ModelVersion | undefined;
  graphPath(sha256: string): string;
}

export class RegistryError extends Error {}

export function graphCacheDir(modelsDir: string): string {
  return path.join(modelsDir, 'cache', 'graphs');
}

/** Loads and checks every manifest. Fails loudly on a malformed manifest or a duplicate name or ID. */
export function loadRegistry(modelsDir: string): Registry {
  const dir = path.join(modelsDir, 'versions');
  if (!fs.existsSync(dir)) throw new RegistryError(`model manifests folder not found: ${dir}`);
  const versions = new Map<VersionId, ModelVersion>();
  const names = new Map<string, ModelVersion>();
  for (const entry of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const file = path.join(dir, entry);
    let raw: unknown;
    try {
      raw = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      throw new RegistryError(`${file}: not valid JSON: ${(e as Error).message}`);
    }
    const parsed = ManifestSchema.safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
      throw new RegistryError(`${file}: invalid manifest: ${why}`);
    }
    // The ID hashes the file as written (validated above), so nothing zod adds or strips changes it.
    const v: ModelVersion = { id: computeVersionId(raw), manifest: parsed.data, file };
    const clash = names.get(v.manifest.name) ?? versions.get(v.id);
    if (clash) throw new RegistryError(`${file}: duplicate of ${clash.file}`);
    versions.set(v.id, v);
    names.set(v.manifest.name, v);
  }
  const graphs = graphCacheDir(modelsDir);
  return {
    modelsDir,
    versions,
    get: (id) => versions.get(id),
    byName: (name) => names.get(name),
    defaultFor(pipeline, preferred) {
      if (preferred) {
        const v = names.get(preferred) ?? versions.get(preferred as VersionId);
        if (!v || v.manifest.pipeline !== pipeline) throw new RegistryError(`configured ${pipeline} version "${preferred}" is not a ${pipeline} version in the registry`);
        return v;
      }
      return [...versions.values()].filter((v) => v.manifest.pipeline === pipeline).sort((a, b) => a.manifest.name.localeCompare(b.manifest.name))[0];
    },
    graphPath: (sha256) => path.join(graphs, `${sha256}.onnx`),
  };
}
