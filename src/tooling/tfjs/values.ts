// The values the TF.js importer passes between op handlers: a constant (data known at import time,
// folded in JS) or a symbolic tensor (an ONNX value name), both with a static shape. Plus the
// constant folding itself: pure functions on constants, no graph building.
import type { ConstTensor, DType } from './reader.ts';

export type Const = ConstTensor & { kind: 'const' };
export type Sym = { kind: 'sym'; name: string; dtype: DType; shape: number[] };
export type Value = Const | Sym;

export const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1);

export function constOf(dtype: DType, shape: number[], data: Const['data']): Const {
  return { kind: 'const', dtype, shape, data };
}

export function sym(name: string, dtype: DType, shape: number[]): Sym {
  return { kind: 'sym', name, dtype, shape };
}

export function newData(dtype: DType, n: number): Const['data'] {
  if (dtype === 'float32') return new Float32Array(n);
  if (dtype === 'int32') return new Int32Array(n);
  if (dtype === 'int64') return new BigInt64Array(n);
  return new Uint8Array(n);
}

export function numbers(c: Const): number[] {
  return Array.from(c.data as ArrayLike<number | bigint>, (v) => Number(v));
}

export function stridesOf(shape: number[]): number[] {
  const s = new Array<number>(shape.length).fill(1);
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1]! * shape[i + 1]!;
  return s;
}

export function broadcastShape(a: number[], b: number[], where: string): number[] {
  const n = Math.max(a.length, b.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    if (x !== y && x !== 1 && y !== 1) throw new Error(`${where}: shapes [${a}] and [${b}] do not broadcast`);
    out.push(x === 1 ? y : x);
  }
  return out;
}

/** Element-wise binary op on constants, with broadcasting. */
export function evalBinary(a: Const, b: Const, f: (x: number, y: number) => number, where: string): Const {
  const shape = broadcastShape(a.shape, b.shape, where);
  const out = newData(a.dtype, size(shape));
  const st = stridesOf(shape);
  const idx = (src: number[], i: number) => {
    let off = 0;
    let rem = i;
    const sst = stridesOf(src);
    for (let d = 0; d < shape.length; d++) {
      const coord = Math.floor(rem / st[d]!);
      rem -= coord * st[d]!;
      const sd = d - (shape.length - src.length);
      if (sd >= 0 && src[sd]! !== 1) off += coord * sst[sd]!;
    }
    return off;
  };
  const ad = numbers(a);
  const bd = numbers(b);
  for (let i = 0; i < out.length; i++) {
    const v = f(ad[idx(a.shape, i)]!, bd[idx(b.shape, i)]!);
    (out as Float32Array)[i] = a.dtype === 'int32' ? Math.trunc(v) : v;
  }
  return constOf(a.dtype, shape, out);
}

/** Transposes a constant (weights) in JS. */
export function transposeConst(c: Const, perm: number[]): Const {
  const shape = perm.map((p) => c.shape[p]!);
  const src = stridesOf(c.shape);
  const dst = stridesOf(shape);
  const out = newData(c.dtype, size(shape));
  const n = size(shape);
  const data = c.data as Float32Array;
  for (let i = 0; i < n; i++) {
    let rem = i;
    let off = 0;
    for (let d = 0; d < shape.length; d++) {
      const coord = Math.floor(rem / dst[d]!);
      rem -= coord * dst[d]!;
      off += coord * src[perm[d]!]!;
    }
    (out as Float32Array)[i] = data[off]!;
  }
  return constOf(c.dtype, shape, out);
}

/** A strided slice resolved against a static shape (ONNX Slice's starts/ends/steps, all axes). */
export interface SliceSpec {
  starts: number[];
  ends: number[];
  steps: number[];
  outShape: number[];
  /** Axes dropped after slicing (TF shrink_axis_mask). */
  shrink: number[];
}

export function sliceConst(c: Const, spec: SliceSpec): Const {
  const out = newData(c.dtype, size(spec.outShape));
  const src = stridesOf(c.shape);
  const dst = stridesOf(spec.outShape);
  const data = c.data as Float32Array;
  for (let i = 0; i < out.length; i++) {
    let rem = i;
    let off = 0;
    for (let d = 0; d < spec.outShape.length; d++) {
      const coord = Math.floor(rem / dst[d]!);
      rem -= coord * dst[d]!;
      off += (spec.starts[d]! + coord * spec.steps[d]!) * src[d]!;
    }
    (out as Float32Array)[i] = data[off]!;
  }
  return constOf(c.dtype, spec.outShape.filter((_, d) => !spec.shrink.includes(d)), out);
}

export function concatConsts(parts: Const[], axis: number): Const {
  const shape = [...parts[0]!.shape];
  shape[axis] = parts.reduce((a, p) => a + p.shape[axis]!, 0);
  const outer = size(shape.slice(0, axis));
  const out = newData(parts[0]!.dtype, size(shape));
  let o = 0;
  for (let i = 0; i < outer; i++) {
    for (const p of parts) {
      const chunk = size(p.shape.slice(axis));
      const d = p.data as Float32Array;
      for (let j = 0; j < chunk; j++) (out as Float32Array)[o++] = d[i * chunk + j]!;
    }
  }
  return constOf(parts[0]!.dtype, shape, out);
}

export function castConst(c: Const, to: DType): Const {
  const out = newData(to, size(c.shape));
  const src = numbers(c);
  for (let i = 0; i < src.length; i++) {
    if (to === 'int64') (out as BigInt64Array)[i] = BigInt(Math.trunc(src[i]!));
    else (out as Float32Array)[i] = to === 'float32' ? src[i]! : to === 'bool' ? (src[i] ? 1 : 0) : Math.trunc(src[i]!);
  }
  return constOf(to, c.shape, out);
}

/** ONNX TensorProto element type of a dtype (Cast's `to`). */
export function onnxTypeCode(t: DType): number {
  return { float32: 1, int32: 6, int64: 7, bool: 9 }[t];
}
