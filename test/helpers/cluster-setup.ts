// Global setup of the `cluster` project: the model graphs (as the other projects) and a private
// three-node Redis Cluster (test/helpers/redis-cluster.ts). Where redis-server cannot run in
// cluster mode, `redisClusterUrl` is empty and `redisClusterSkip` says why; the tests then skip,
// printing it. Any other failure (no redis-server at all, a node that does not start) fails the run.
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { fetchAll } from '../../src/tooling/fetch-graphs.ts';
import { loadRegistry } from '../../src/models/registry.ts';
import { ClusterUnsupported, startLocalCluster, type LocalCluster } from './redis-cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisClusterUrl: string;
    redisClusterSkip: string;
  }
}

let cluster: LocalCluster | undefined;

export async function setup(project: TestProject): Promise<void> {
  await fetchAll(loadRegistry(path.resolve('models')));
  try {
    cluster = await startLocalCluster(3);
    project.provide('redisClusterUrl', cluster.url);
    project.provide('redisClusterSkip', '');
  } catch (e) {
    if (!(e instanceof ClusterUnsupported)) throw e;
    project.provide('redisClusterUrl', '');
    project.provide('redisClusterSkip', e.message);
  }
}

export async function teardown(): Promise<void> {
  await cluster?.stop();
}
