// TensorFlow.js graph model -> ONNX (opset 17).
//
// Layout: the graph stays NHWC like the original. Each op whose ONNX form is NCHW-only (Conv,
// ConvTranspose, pooling, Resize, DepthToSpace) is wrapped in Transpose(NHWC->NCHW) ...
// Transpose(NCHW->NHWC); onnxruntime's transpose optimizer cancels the pairs between such ops and
// pushes the rest through element-wise ops, so the served graph runs NCHW inside.
//
// Shapes: inputs get static shapes (batch 1, the size the version is built for), every op's output
// shape is inferred here, and nodes whose inputs are all constant are evaluated in JS (Shape,
// StridedSlice, Pack, Cast, arithmetic ...): dynamic-shape plumbing folds away.
//
// Ops: one handler per TF op in ops/ (by family), looked up by op name in ops/index.ts. An op
// without a handler fails the import, naming the op and the node.
import type { OnnxDType } from '../onnx-builder.ts';
import { ConvertContext, UnsupportedOpError } from './context.ts';
import { DEAD_BRANCH } from './ops/graph.ts';
import { OP_HANDLERS } from './ops/index.ts';
import type { DType, TfGraph, TfNode } from './reader.ts';
import { constOf, type Value } from './values.ts';

export { UnsupportedOpError };

export interface ConvertOptions {
  /** Static shape per placeholder (replaces -1 dims). */
  inputShapes?: Record<string, number[]>;
  /**
   * Placeholders fixed to a scalar at import (RVM's downsample ratio, its zero recurrent states):
   * they become constants, and the graph folds around them (no input is declared for them).
   */
  inputValues?: Record<string, number>;
  /** Output tensor names ("node" or "node:k"); default: the signature's, else the graph's sinks. */
  outputs?: string[];
  graphName: string;
}

export interface ConvertResult {
  bytes: Uint8Array;
  inputs: Array<{ name: string; dtype: DType; shape: number[] }>;
  outputs: Array<{ name: string; dtype: DType; shape: number[] }>;
  /** TF ops seen, with counts (for reports). */
  ops: Record<string, number>;
}

export function convertTfjsGraph(graph: TfGraph, opts: ConvertOptions): ConvertResult {
  const ctx = new ConvertContext(graph, opts.inputShapes);
  const b = ctx.builder;
  const values = new Map<string, Value>();
  const ops: Record<string, number> = {};
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));

  const key = (ref: string) => (ref.includes(':') ? ref : `${ref}:0`);

  // Topological order by data dependencies (model.json order is not guaranteed).
  const order: TfNode[] = [];
  const state = new Map<string, 1 | 2>();
  const visit = (n: TfNode) => {
    const s = state.get(n.name);
    if (s === 2) return;
    if (s === 1) throw new Error(`graph has a cycle at ${n.name}`);
    state.set(n.name, 1);
    for (const i of n.inputs) {
      const dep = byName.get(i.split(':')[0]!);
      if (!dep) throw new Error(`node ${n.name}: input ${i} does not exist`);
      visit(dep);
    }
    state.set(n.name, 2);
    order.push(n);
  };
  const wanted =
    opts.outputs ??
    graph.signatureOutputs ??
    (() => {
      const consumed = new Set(graph.nodes.flatMap((n) => n.inputs.map((i) => i.split(':')[0]!)));
      return graph.nodes.filter((n) => !consumed.has(n.name) && n.op !== 'Const' && n.op !== 'Placeholder').map((n) => n.name);
    })();
  for (const o of wanted) {
    const n = byName.get(o.split(':')[0]!);
    if (!n) throw new Error(`output ${o} is not a node of the graph`);
    visit(n);
  }

  // Nodes on the untaken side of a constant Switch (see DEAD_BRANCH): skipped, their outputs dead.
  const dead = new Set<string>();
  for (const node of order) {
    ops[node.op] = (ops[node.op] ?? 0) + 1;
    const fixed = node.op === 'Placeholder' ? opts.inputValues?.[node.name] : undefined;
    if (fixed !== undefined) {
      values.set(`${node.name}:0`, constOf('float32', [], Float32Array.of(fixed)));
      continue;
    }
    const ins = node.inputs.map((i) => {
      const v = values.get(key(i)) ?? (dead.has(i.split(':')[0]!) ? DEAD_BRANCH : undefined);
      if (!v) throw new Error(`node ${node.name}: input ${i} has no value`);
      return v;
    });
    if (node.op !== 'Merge' && ins.includes(DEAD_BRANCH)) {
      dead.add(node.name);
      continue;
    }
    const handler = OP_HANDLERS[node.op];
    if (!handler) throw new UnsupportedOpError(node.op, node.name);
    const outs = handler(node, ins, ctx);
    outs.forEach((v, i) => values.set(`${node.name}:${i}`, v));
  }

  const outputs: ConvertResult['outputs'] = [];
  for (const o of wanted) {
    const v = values.get(key(o))!;
    let name = ctx.tensorName(v, o);
    // Name graph outputs after the TF tensor so callers can find them.
    const outName = b.name(key(o));
    b.node('Identity', [name], [outName]);
    name = outName;
    b.output(name, v.dtype as OnnxDType, v.shape);
    outputs.push({ name, dtype: v.dtype, shape: v.shape });
  }
  return { bytes: b.serialize(opts.graphName), inputs: ctx.inputs, outputs, ops };
}
