// Dynamic batching for one graph (Triton's dynamic batcher, for a queue worker): calls of `run` from
// tasks running at the same time in one inference thread are queued and run together, up to
// `maxBatchSize` calls, waiting at most `maxQueueDelayMs` after the oldest one arrived. Pre- and
// post-processing stay per task; only the model run is shared.
//
// The graphs have static shapes, so a version carries the graph imported at several batch sizes
// (1, 2, 4, ..., 64: `detector`, `detector_b2`, ...). A batch of n calls is split greedily into the
// largest imported sizes that fit (37 = 32 + 4 + 1): no padding, so no wasted compute at low load.
// Each input is concatenated along its first (batch) dimension, every output split along it.
//   feeds    per call: float32 [1, ...]   ->   batched: float32 [b, ...] for each imported size b
//   outputs  batched: [b, ...]            ->   per call: [1, ...]
import type { FloatTensor, ModelSession } from './onnx.ts';

export interface BatchingOptions {
  /** Most calls run together. */
  maxBatchSize: number;
  /** Longest a call waits for others before its batch runs, milliseconds. */
  maxQueueDelayMs: number;
}

export interface BatcherStats {
  /** Calls answered (Triton's inference count). */
  inferences: number;
  /** Model runs made for them (execution count): inferences / executions is the average batch. */
  executions: number;
}

interface Call {
  feeds: Record<string, FloatTensor>;
  arrived: number;
  resolve: (out: Record<string, FloatTensor>) => void;
  reject: (e: unknown) => void;
}

/** Splits n into the largest available sizes that fit, largest first (sizes include 1). */
export function splitBatch(n: number, sizes: readonly number[]): number[] {
  const desc = [...sizes].sort((a, b) => b - a);
  const out: number[] = [];
  let left = n;
  for (const s of desc) while (left >= s) (out.push(s), (left -= s));
  return out;
}

export class DynamicBatcher implements ModelSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly provider: ModelSession['provider'];
  private readonly queue: Call[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private readonly counts: BatcherStats = { inferences: 0, executions: 0 };
  private readonly sizes: number[];

  /** `variants`: the same graph imported at each batch size (size 1 required). */
  constructor(
    private readonly variants: ReadonlyMap<number, ModelSession>,
    private readonly opts: BatchingOptions,
  ) {
    const one = variants.get(1);
    if (!one) throw new Error('dynamic batching needs the graph at batch size 1');
    this.inputNames = one.inputNames;
    this.outputNames = one.outputNames;
    this.provider = one.provider;
    this.sizes = [...variants.keys()].filter((s) => s <= opts.maxBatchSize);
  }

  stats(): BatcherStats {
    return { ...this.counts };
  }

  run(feeds: Record<string, FloatTensor>): Promise<Record<string, FloatTensor>> {
    return new Promise((resolve, reject) => {
      this.queue.push({ feeds, arrived: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  /** Graphs with integer inputs or outputs are not batched. */
  runAny(feeds: Parameters<ModelSession['runAny']>[0]): ReturnType<ModelSession['runAny']> {
    return this.variants.get(1)!.runAny(feeds);
  }

  async release(): Promise<void> {
    clearTimeout(this.timer);
    for (const c of this.queue.splice(0)) c.reject(new Error('session released'));
    await Promise.all([...this.variants.values()].map((s) => s.release()));
  }

  /** Runs now when a full batch waits, else when the oldest call has waited maxQueueDelayMs. */
  private schedule(): void {
    if (this.running || this.queue.length === 0) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    const waited = performance.now() - this.queue[0]!.arrived;
    if (this.queue.length >= this.opts.maxBatchSize || waited >= this.opts.maxQueueDelayMs) {
      void this.flush();
      return;
    }
    this.timer = setTimeout(() => this.schedule(), this.opts.maxQueueDelayMs - waited);
  }

  private async flush(): Promise<void> {
    this.running = true;
    const calls = this.queue.splice(0, this.opts.maxBatchSize);
    let at = 0;
    for (const size of splitBatch(calls.length, this.sizes)) {
      const group = calls.slice(at, at + size);
      at += size;
      try {
        const outs = await this.runGroup(group);
        group.forEach((c, i) => c.resolve(outs[i]!));
      } catch (e) {
        for (const c of group) c.reject(e);
      }
    }
    this.running = false;
    this.schedule();
  }

  private async runGroup(group: Call[]): Promise<Array<Record<string, FloatTensor>>> {
    const b = group.length;
    const session = this.variants.get(b)!;
    const feeds: Record<string, FloatTensor> = {};
    for (const name of this.inputNames) {
      const first = group[0]!.feeds[name]!;
      const per = first.data.length;
      const data = new Float32Array(per * b);
      group.forEach((c, i) => {
        const t = c.feeds[name]!;
        if (t.data.length !== per) throw new Error(`batched input ${name}: calls disagree on its size (${t.dims.join('x')} vs ${first.dims.join('x')})`);
        data.set(t.data, i * per);
      });
      feeds[name] = { data, dims: [b, ...first.dims.slice(1)] };
    }
    const out = await session.run(feeds);
    this.counts.inferences += b;
    this.counts.executions++;
    return group.map((_, i) => {
      const one: Record<string, FloatTensor> = {};
      for (const [name, t] of Object.entries(out)) {
        const per = t.data.length / b;
        one[name] = { data: t.data.slice(i * per, (i + 1) * per), dims: [1, ...t.dims.slice(1)] };
      }
      return one;
    });
  }
}
