import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, computeVersionId, isVersionId } from '../../src/domain/version-id.ts';
import { loadRegistry } from '../../src/models/registry.ts';

describe('version ids', () => {
  it('canonical JSON sorts keys at every depth and drops whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('refuses values JSON cannot carry faithfully', () => {
    expect(() => canonicalJson({ a: undefined })).toThrow(/undefined/);
    expect(() => canonicalJson({ a: Number.NaN })).toThrow(/non-finite/);
  });

  it('is the sha256 of the canonical JSON: key order does not matter, any value does', () => {
    const a = computeVersionId({ pipeline: 'p', params: { x: 1, y: 2 } });
    expect(isVersionId(a)).toBe(true);
    expect(computeVersionId({ params: { y: 2, x: 1 }, pipeline: 'p' })).toBe(a);
    expect(computeVersionId({ pipeline: 'p', params: { x: 1, y: 3 } })).not.toBe(a);
  });

  it('the registry keys each committed manifest by the hash of its file', () => {
    const reg = loadRegistry(path.resolve('models'));
    expect(reg.versions.size).toBeGreaterThanOrEqual(1);
    for (const v of reg.versions.values()) {
      expect(v.id).toBe(computeVersionId(JSON.parse(fs.readFileSync(v.file, 'utf8'))));
      expect(reg.byName(v.manifest.name)).toBe(v);
    }
  });

  it('a changed graph hash or parameter gives a new version id', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'reg-'));
    fs.mkdirSync(path.join(dir, 'versions'));
    const src = JSON.parse(fs.readFileSync('models/versions/face-detection-blazeface.json', 'utf8'));
    fs.writeFileSync(path.join(dir, 'versions', 'a.json'), JSON.stringify(src));
    const id1 = [...loadRegistry(dir).versions.keys()][0];
    src.params.min_score = 0.6;
    fs.writeFileSync(path.join(dir, 'versions', 'a.json'), JSON.stringify(src));
    const id2 = [...loadRegistry(dir).versions.keys()][0];
    expect(id2).not.toBe(id1);
    fs.rmSync(dir, { recursive: true });
  });

  it('fails loudly on a malformed manifest, naming the file and field', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'reg-'));
    fs.mkdirSync(path.join(dir, 'versions'));
    fs.writeFileSync(path.join(dir, 'versions', 'bad.json'), JSON.stringify({ name: 'x', pipeline: 'p' }));
    expect(() => loadRegistry(dir)).toThrow(/bad\.json: invalid manifest: .*description/);
    fs.rmSync(dir, { recursive: true });
  });
});
