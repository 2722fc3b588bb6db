// What an op handler works with: the ONNX graph being built, the TF.js graph's weights and
// placeholders, and the helpers every handler needs (a value as an ONNX tensor name, NHWC <-> NCHW
// transposes, constant arguments). Handlers live in ops/, one per TF op (tf2onnx's `@tf_op`), and
// are registered by op name in ops/index.ts.
import { OnnxGraphBuilder, type OnnxDType } from '../onnx-builder.ts';
import type { DType, TfGraph, TfNode } from './reader.ts';
import { sym, type Const, type Sym, type Value } from './values.ts';

/** An op the importer has no mapping for (or a form of it it cannot map), naming the op and the node. */
export class UnsupportedOpError extends Error {
  constructor(
    readonly op: string,
    readonly node: string,
    detail?: string,
  ) {
    super(`unsupported op ${op} at node "${node}"${detail ? `: ${detail}` : ''}`);
  }
}

/**
 * Converts one TF node: its input values in, one value per TF output out (index k = "node:k").
 * A handler folds constants in JS where it can and emits ONNX nodes through `ctx` otherwise.
 */
export type OpHandler = (node: TfNode, ins: Value[], ctx: ConvertContext) => Value[];

export const NHWC_TO_NCHW = [0, 3, 1, 2];
export const NCHW_TO_NHWC = [0, 2, 3, 1];

const NO_SOURCE: Pick<TfGraph, 'weights' | 'placeholders'> = { weights: new Map(), placeholders: new Map() };

export class ConvertContext {
  /** Graph inputs, in the order the Placeholder handler declared them. */
  readonly inputs: Array<{ name: string; dtype: DType; shape: number[] }> = [];
  /** Each constant becomes one initializer, however many nodes use it. */
  private readonly constNames = new Map<Const, string>();

  constructor(
    /** The TF.js graph's weights (for Const) and declared placeholder shapes (for Placeholder). */
    readonly source: Pick<TfGraph, 'weights' | 'placeholders'> = NO_SOURCE,
    /** Static shape per placeholder (replaces -1 dims). */
    readonly inputShapes: Record<string, number[]> = {},
    readonly builder = new OnnxGraphBuilder(),
  ) {}

  /**
   * The batch size this import is for: the leading dimension every declared input shape shares (1
   * when there are none, or they disagree). TF.js graphs are exported at batch 1 and some hard-code
   * it (a Reshape to [1, 384, 1]); importing at batch N rewrites those (see the Reshape handler).
   */
  get batchSize(): number {
    const leads = new Set(Object.values(this.inputShapes).map((s) => s[0] ?? 1));
    return leads.size === 1 ? [...leads][0]! : 1;
  }

  /** The ONNX tensor name of a value: a constant becomes an initializer named after `base` (once). */
  tensorName(v: Value, base: string): string {
    if (v.kind === 'sym') return v.name;
    let n = this.constNames.get(v);
    if (!n) {
      n = this.builder.initializer(base, v.dtype as OnnxDType, v.shape, v.data);
      this.constNames.set(v, n);
    }
    return n;
  }

  /** A value as a symbolic tensor (a constant becomes an initializer named `constName`). */
  asSym(v: Value, constName: string): Sym {
    return v.kind === 'sym' ? v : sym(this.tensorName(v, constName), v.dtype, v.shape);
  }

  transpose(x: Sym, perm: number[], base: string): Sym {
    return sym(this.builder.op('Transpose', [x.name], { perm }, base), x.dtype, perm.map((p) => x.shape[p]!));
  }

  /** Input `i` of `node`, which this importer needs constant (axes, sizes, paddings ...). */
  constArg(node: TfNode, ins: Value[], i: number, what: string): Const {
    const v = ins[i];
    if (!v || v.kind !== 'const') throw new UnsupportedOpError(node.op, node.name, `${what} must be constant`);
    return v;
  }
}
