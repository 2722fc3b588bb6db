// Graphs the project builds itself, by builder name. A manifest names the builder, its version
// and parameters; `npm run models -- fetch` builds the graph and checks its pinned sha256.
import { AppError } from '../../errors/codes.ts';
import { buildPushPullInpaint } from './push-pull-inpaint.ts';
import { buildTpsWarp } from './tps-warp.ts';

type Params = Record<string, number | string | boolean>;

export const GRAPH_BUILDERS: Readonly<Record<string, { version: number; build(params: Params): Uint8Array }>> = {
  'push-pull-inpaint': { version: 1, build: (p) => buildPushPullInpaint({ levels: Number(p.levels ?? 10) }) },
  'tps-warp': { version: 1, build: () => buildTpsWarp() },
};

export function buildGeneratedGraph(builder: string, version: number, params: Params): Uint8Array {
  const b = GRAPH_BUILDERS[builder];
  if (!b) throw new AppError('MODEL_UNAVAILABLE', `unknown graph builder "${builder}"`);
  if (b.version !== version) throw new AppError('MODEL_UNAVAILABLE', `graph builder "${builder}" is version ${b.version}, the manifest wants ${version} (run npm run models -- pin)`);
  return b.build(params);
}
