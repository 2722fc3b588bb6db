// The ONLY importer of onnx-proto: builds ONNX graphs (opset 17) and serializes them. Used by the
// TF.js importer and by the project's own generated graphs. Output is deterministic: the same
// graph always serializes to the same bytes (names and order are the caller's).
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export const OPSET = 17;

export type OnnxDType = 'float32' | 'int32' | 'int64' | 'bool';

const ELEM: Record<OnnxDType, number> = {
  float32: onnx.TensorProto.DataType.FLOAT,
  int32: onnx.TensorProto.DataType.INT32,
  int64: onnx.TensorProto.DataType.INT64,
  bool: onnx.TensorProto.DataType.BOOL,
};

export type AttrInput = number | number[] | string | { floats: number[] } | { float: number };

function toAttribute(name: string, v: AttrInput): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'string') return { name, type: T.STRING, s: Buffer.from(v) };
  if (typeof v === 'number') return Number.isInteger(v) ? { name, type: T.INT, i: v } : { name, type: T.FLOAT, f: v };
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v };
  if ('floats' in v) return { name, type: T.FLOATS, floats: v.floats };
  return { name, type: T.FLOAT, f: v.float };
}

function rawBytes(data: Float32Array | Int32Array | BigInt64Array | Uint8Array): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export class OnnxGraphBuilder {
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly used = new Set<string>();
  private counter = 0;

  /** A fresh value name derived from `base`. */
  name(base: string): string {
    const clean = base.replace(/[^A-Za-z0-9_./:-]/g, '_');
    let n = clean;
    while (this.used.has(n)) n = `${clean}__${++this.counter}`;
    this.used.add(n);
    return n;
  }

  node(op: string, inputs: string[], outputs: string[], attrs: Record<string, AttrInput> = {}, name?: string): void {
    this.nodes.push({
      opType: op,
      input: inputs,
      output: outputs,
      name: name ?? `${op}_${this.nodes.length}`,
      attribute: Object.entries(attrs).map(([k, v]) => toAttribute(k, v)),
    });
  }

  /** Adds a one-output node and returns its output's name. */
  op(op: string, inputs: string[], attrs: Record<string, AttrInput> = {}, base = op): string {
    const out = this.name(base);
    this.node(op, inputs, [out], attrs);
    return out;
  }

  initializer(base: string, dtype: OnnxDType, dims: number[], data: Float32Array | Int32Array | BigInt64Array | Uint8Array): string {
    const name = this.name(base);
    this.initializers.push({ name, dataType: ELEM[dtype], dims, rawData: rawBytes(data) });
    return name;
  }

  int64s(base: string, values: number[]): string {
    return this.initializer(base, 'int64', [values.length], BigInt64Array.from(values.map(BigInt)));
  }

  /** A graph input; a string dim is symbolic (dynamic), equal names meaning equal sizes. */
  input(name: string, dtype: OnnxDType, dims: Array<number | string>): void {
    this.used.add(name);
    this.inputs.push(valueInfo(name, dtype, dims));
  }

  output(name: string, dtype: OnnxDType, dims: Array<number | string>): void {
    this.outputs.push(valueInfo(name, dtype, dims));
  }

  serialize(graphName: string, docString = ''): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: OPSET }],
      producerName: 'image-inference-worker',
      producerVersion: '1',
      docString,
      graph: {
        name: graphName,
        node: this.nodes,
        initializer: this.initializers,
        input: this.inputs,
        output: this.outputs,
      },
    });
    return onnx.ModelProto.encode(model).finish();
  }

  get nodeCount(): number {
    return this.nodes.length;
  }
}

function valueInfo(name: string, dtype: OnnxDType, dims: Array<number | string>): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    type: {
      tensorType: {
        elemType: ELEM[dtype],
        shape: { dim: dims.map((d, i) => (typeof d === 'string' ? { dimParam: d } : d >= 0 ? { dimValue: d } : { dimParam: `d${i}` })) },
      },
    },
  };
}

/** One node of a serialized model, attributes decoded (for reports and tests). */
export interface NodeSummary {
  op: string;
  name: string;
  inputs: string[];
  outputs: string[];
  attrs: Record<string, number | number[] | string>;
}

function attrValue(a: onnxProto.onnx.IAttributeProto): number | number[] | string {
  const T = onnx.AttributeProto.AttributeType;
  if (a.type === T.STRING) return Buffer.from(a.s ?? []).toString('utf8');
  if (a.type === T.INTS) return (a.ints ?? []).map(Number);
  if (a.type === T.FLOATS) return (a.floats ?? []).map(Number);
  if (a.type === T.FLOAT) return Number(a.f);
  return Number(a.i);
}

/** Op types and counts of a serialized model, its nodes in order and its initializers' dims. */
export function describeModel(bytes: Uint8Array): {
  ops: Record<string, number>;
  initializers: number;
  opset: number;
  nodes: NodeSummary[];
  initializerDims: Record<string, number[]>;
} {
  const m = onnx.ModelProto.decode(bytes);
  const ops: Record<string, number> = {};
  for (const n of m.graph?.node ?? []) ops[n.opType!] = (ops[n.opType!] ?? 0) + 1;
  const nodes = (m.graph?.node ?? []).map((n) => ({
    op: n.opType ?? '',
    name: n.name ?? '',
    inputs: [...(n.input ?? [])],
    outputs: [...(n.output ?? [])],
    attrs: Object.fromEntries((n.attribute ?? []).map((a) => [a.name ?? '', attrValue(a)])),
  }));
  const initializerDims = Object.fromEntries((m.graph?.initializer ?? []).map((t) => [t.name ?? '', (t.dims ?? []).map(Number)]));
  return { ops, initializers: m.graph?.initializer?.length ?? 0, opset: Number(m.opsetImport?.[0]?.version ?? 0), nodes, initializerDims };
}
