// Reads a TensorFlow.js graph model (model.json + weight shards): the node list with decoded
// attributes, and every weight dequantized to float32 (or kept int32).
//
// Weight shards of a manifest group are one byte stream in `paths` order; each weight takes
// prod(shape) elements of its stored dtype. Quantized weights: float16 (IEEE half) or affine
// uint8/uint16 (value = q * scale + min).

export type DType = 'float32' | 'int32' | 'int64' | 'bool';

export interface ConstTensor {
  dtype: DType;
  shape: number[];
  data: Float32Array | Int32Array | BigInt64Array | Uint8Array;
}

export type AttrValue = number | boolean | string | number[] | string[] | DType | { shape: number[] } | undefined;

export interface TfNode {
  name: string;
  op: string;
  /** Data inputs as "node" or "node:k" (control inputs "^x" are dropped). */
  inputs: string[];
  attr: Record<string, AttrValue>;
}

export interface TfGraph {
  nodes: TfNode[];
  weights: Map<string, ConstTensor>;
  /** Output tensor names from the signature, if the model has one. */
  signatureOutputs: string[] | null;
  /** Placeholder name -> shape from the model (-1 = unknown). */
  placeholders: Map<string, number[]>;
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number; original_dtype?: string };
}

interface ModelJson {
  modelTopology: { node: Array<{ name: string; op: string; input?: string[]; attr?: Record<string, unknown> }> };
  weightsManifest: Array<{ paths: string[]; weights: WeightSpec[] }>;
  signature?: { outputs?: Record<string, { name: string }> };
}

export class TfjsFormatError extends Error {}

const DT: Record<string, DType> = { DT_FLOAT: 'float32', DT_INT32: 'int32', DT_INT64: 'int64', DT_BOOL: 'bool', DT_HALF: 'float32' };

function decodeAttr(v: Record<string, unknown>): AttrValue {
  if ('i' in v) return Number(v.i);
  if ('f' in v) return Number(v.f);
  if ('b' in v) return Boolean(v.b);
  if ('s' in v) return Buffer.from(String(v.s), 'base64').toString('utf8');
  if ('type' in v) return DT[String(v.type)] ?? (String(v.type) as DType);
  if ('shape' in v) {
    const dims = ((v.shape as { dim?: Array<{ size?: string }> }).dim ?? []).map((d) => Number(d.size ?? -1));
    return { shape: dims };
  }
  if ('list' in v) {
    const l = v.list as { i?: string[]; s?: string[]; f?: number[] };
    if (l.i) return l.i.map(Number);
    if (l.s) return l.s.map((s) => Buffer.from(s, 'base64').toString('utf8'));
    if (l.f) return l.f.map(Number);
    return [];
  }
  return undefined;
}

/** IEEE 754 half -> float. */
function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const f = h & 0x3ff;
  if (e === 0) return s * 2 ** -14 * (f / 1024);
  if (e === 31) return f ? Number.NaN : s * Number.POSITIVE_INFINITY;
  return s * 2 ** (e - 15) * (1 + f / 1024);
}

function decodeWeight(spec: WeightSpec, bytes: Buffer, offset: number): { tensor: ConstTensor; size: number } {
  const n = spec.shape.reduce((a, b) => a * b, 1);
  const q = spec.quantization;
  if (q) {
    if (q.dtype === 'float16') {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = halfToFloat(bytes.readUInt16LE(offset + 2 * i));
      return { tensor: { dtype: 'float32', shape: spec.shape, data: out }, size: 2 * n };
    }
    if (q.dtype === 'uint8' || q.dtype === 'uint16') {
      const w = q.dtype === 'uint8' ? 1 : 2;
      const scale = q.scale ?? 1;
      const min = q.min ?? 0;
      const isInt = (q.original_dtype ?? spec.dtype) === 'int32';
      const out = isInt ? new Int32Array(n) : new Float32Array(n);
      for (let i = 0; i < n; i++) {
        const v = (w === 1 ? bytes[offset + i]! : bytes.readUInt16LE(offset + 2 * i)) * scale + min;
        out[i] = isInt ? Math.round(v) : v;
      }
      return { tensor: { dtype: isInt ? 'int32' : 'float32', shape: spec.shape, data: out }, size: w * n };
    }
    throw new TfjsFormatError(`weight ${spec.name}: unsupported quantization ${q.dtype}`);
  }
  if (spec.dtype === 'float32') {
    const out = new Float32Array(n);
    for (let i = 0; i < n; i++) out[i] = bytes.readFloatLE(offset + 4 * i);
    return { tensor: { dtype: 'float32', shape: spec.shape, data: out }, size: 4 * n };
  }
  if (spec.dtype === 'int32') {
    const out = new Int32Array(n);
    for (let i = 0; i < n; i++) out[i] = bytes.readInt32LE(offset + 4 * i);
    return { tensor: { dtype: 'int32', shape: spec.shape, data: out }, size: 4 * n };
  }
  if (spec.dtype === 'bool') {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = bytes[offset + i]! ? 1 : 0;
    return { tensor: { dtype: 'bool', shape: spec.shape, data: out }, size: n };
  }
  throw new TfjsFormatError(`weight ${spec.name}: unsupported dtype ${spec.dtype}`);
}

/** Parses model.json text and its shards (by path as named in the manifest). */
export function readTfjsGraph(modelJson: string, shard: (path: string) => Buffer): TfGraph {
  let m: ModelJson;
  try {
    m = JSON.parse(modelJson) as ModelJson;
  } catch (e) {
    throw new TfjsFormatError(`model.json is not JSON: ${(e as Error).message}`);
  }
  if (!m.modelTopology?.node || !Array.isArray(m.weightsManifest)) throw new TfjsFormatError('model.json is not a TensorFlow.js graph model');
  const weights = new Map<string, ConstTensor>();
  for (const group of m.weightsManifest) {
    const bytes = Buffer.concat(group.paths.map(shard));
    let offset = 0;
    for (const spec of group.weights) {
      const { tensor, size } = decodeWeight(spec, bytes, offset);
      weights.set(spec.name, tensor);
      offset += size;
    }
    if (offset !== bytes.length) throw new TfjsFormatError(`weight group ${group.paths.join(',')}: ${bytes.length} bytes, specs use ${offset}`);
  }
  const nodes: TfNode[] = m.modelTopology.node.map((n) => ({
    name: n.name,
    op: n.op,
    inputs: (n.input ?? []).filter((i) => !i.startsWith('^')),
    attr: Object.fromEntries(Object.entries(n.attr ?? {}).map(([k, v]) => [k, decodeAttr(v as Record<string, unknown>)])),
  }));
  const placeholders = new Map<string, number[]>();
  for (const n of nodes) if (n.op === 'Placeholder') placeholders.set(n.name, (n.attr.shape as { shape: number[] } | undefined)?.shape ?? []);
  const sig = m.signature?.outputs ? Object.values(m.signature.outputs).map((o) => o.name) : null;
  return { nodes, weights, signatureOutputs: sig, placeholders };
}
