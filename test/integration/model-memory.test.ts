// Model memory under a budget (MODEL_MEMORY_MB): one task of every version, twice round, through a
// real one-thread inference pool in a child process (so its RSS is its own), with no budget and
// with a budget far below all versions' graphs (about 50 MB of graph files in all). Every task must
// succeed with the budget too, graphs evicted earlier say so when loaded again, and the process
// stays well below the unbounded one's peak RSS.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

interface Probe {
  budgetMb: number;
  runs: number;
  failures: string[];
  reloads: string[];
  model: { loads: number; evictions: number; bytes: number; graphs: number };
  rssMb: number;
  peakMb: number;
}

const probe = (budgetMb: number): Probe => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/model-memory-probe.ts', String(budgetMb)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 240_000 });
  return JSON.parse(out.trim().split('\n').at(-1)!) as Probe;
};

describe('model memory budget', () => {
  it('keeps every version working within 8 MB of graphs per thread, reloading what it evicted, at a lower RSS', () => {
    const unbounded = probe(0);
    const bounded = probe(8);
    console.log(`peak RSS: no budget ${unbounded.peakMb} MB, 8 MB budget ${bounded.peakMb} MB; reloads ${bounded.reloads.length}`);
    expect(unbounded.failures).toEqual([]);
    expect(bounded.failures).toEqual([]);
    expect(bounded.runs).toBe(unbounded.runs);
    expect(unbounded.reloads).toEqual([]);
    expect(bounded.reloads.length).toBeGreaterThan(0);
    expect(bounded.reloads[0]).toMatch(/^model memory: [a-z0-9-]+\/[a-z_]+ loaded again \(evicted earlier to stay within MODEL_MEMORY_MB\)$/);
    expect(bounded.peakMb).toBeLessThan(0.9 * unbounded.peakMb);
    // Counted: no eviction without a budget; with it, evictions, and what stays loaded fits 8 MB
    // (one graph bigger than the budget may stay while it is the last one used).
    expect(unbounded.model.evictions).toBe(0);
    expect(bounded.model.evictions).toBeGreaterThan(0);
    expect(bounded.model.loads).toBeGreaterThan(unbounded.model.loads);
    expect(bounded.model.bytes).toBeLessThan(unbounded.model.bytes);
  }, 300_000);
});
