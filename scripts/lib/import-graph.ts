// The import graph of src/, read from the source: each file's local imports (resolved to files,
// type-only ones marked) and the packages it imports. The architecture test checks its rules on
// it; `npm run bench -- ...` does not use it; scripts/import-graph.ts draws it for docs/.
import fs from 'node:fs';
import path from 'node:path';

export const SRC = path.resolve('src');

export interface LocalImport {
  file: string;
  /** `import type` / `export type`: erased at run time, so no load and no cycle. */
  typeOnly: boolean;
}

export interface FileImports {
  local: LocalImport[];
  packages: string[];
}

const IMPORT = /^(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;

/** Top-level folder under src/ of a file: its layer. */
export const layerOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0]!;

export function importGraph(root = SRC): Map<string, FileImports> {
  const files = (fs.readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => path.join(root, f));
  const graph = new Map<string, FileImports>();
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const out: FileImports = { local: [], packages: [] };
    for (const m of text.matchAll(IMPORT)) {
      const spec = m[3] ?? m[4] ?? m[5]!;
      if (spec.startsWith('.')) out.local.push({ file: path.resolve(path.dirname(file), spec), typeOnly: Boolean(m[2]) });
      else if (!spec.startsWith('node:')) out.packages.push(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
    graph.set(file, out);
  }
  return graph;
}

/** A node of the drawing: a layer, but each pipeline folder and each step file on its own. */
export function groupOf(file: string): string {
  const parts = path.relative(SRC, file).replace(/\.ts$/, '').split(path.sep);
  if (parts[0] === 'pipelines' && parts.length > 2) return `pipelines/${parts[1]}`;
  if (parts[0] === 'pipelines') return 'pipelines (tables)';
  if (parts[0] === 'steps') return `steps/${parts[1]}`;
  return parts[0]!;
}
