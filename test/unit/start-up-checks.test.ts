// Start-up checks that fail fast, naming what is wrong: the job APIs' version settings, and the
// pipeline tables against the registry (unknown pipeline, another algorithm version).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/env.ts';
import { resolveJobVersions } from '../../src/main/services.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { checkPipelineTables } from '../../src/pipelines/index.ts';
import { checkVersionsAgainstSpecs, PIPELINE_SPECS } from '../../src/pipelines/specs.ts';

const registry = loadRegistry(path.resolve('models'));
const config = (env: Record<string, string>) => parseConfig({ MODELS_DIR: 'models', ...env });

describe('job API versions, resolved at start-up', () => {
  it('defaults to the first version of each pipeline by name, and takes a name or an id', () => {
    const v = resolveJobVersions(config({}), registry);
    expect(v.hairstyle?.manifest.name).toBe('hairstyle-bisenet');
    expect(v.tryon?.manifest.name).toBe('tryon-classic');
    const selfie = registry.byName('hairstyle-selfie')!;
    expect(resolveJobVersions(config({ HAIRSTYLE_VERSION: 'hairstyle-selfie' }), registry).hairstyle).toBe(selfie);
    expect(resolveJobVersions(config({ HAIRSTYLE_VERSION: selfie.id }), registry).hairstyle).toBe(selfie);
  });

  it.each([
    ['HAIRSTYLE_VERSION', 'hairstyle-nope'],
    ['HAIRSTYLE_VERSION', 'tryon-classic'],
    ['TRYON_VERSION', 'face-detection-blazeface'],
  ])('%s=%s fails, naming the variable', (variable, value) => {
    const run = () => resolveJobVersions(config({ [variable]: value }), registry);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(new RegExp(`^${variable}: .*"${value}"`));
  });
});

describe('pipeline tables', () => {
  it('runners and specs cover the same pipelines, and every version fits its pipeline', () => {
    expect(() => checkPipelineTables(registry.versions.values())).not.toThrow();
    expect(Object.keys(PIPELINE_SPECS).sort()).toEqual(['body-landmarks', 'face-detection', 'face-landmarks', 'face-parsing', 'hairstyle', 'person-matting', 'person-segmentation', 'pose', 'tryon']);
  });

  it('refuses an unknown pipeline and an algorithm version the code does not implement, naming the manifest', () => {
    expect(() => checkVersionsAgainstSpecs([{ file: 'x.json', manifest: { name: 'x', pipeline: 'karaoke' } }])).toThrow(/^x\.json: unknown pipeline "karaoke"/);
    expect(() => checkVersionsAgainstSpecs([{ file: 'y.json', manifest: { name: 'y', pipeline: 'hairstyle', algorithm_version: 99 } }])).toThrow(
      new RegExp(`^y\\.json: algorithm_version 99, but the hairstyle pipeline implements ${PIPELINE_SPECS.hairstyle!.algorithmVersion} `),
    );
    // Absent means 1.
    expect(() => checkVersionsAgainstSpecs([{ file: 'z.json', manifest: { name: 'z', pipeline: 'pose' } }])).not.toThrow();
  });
});
