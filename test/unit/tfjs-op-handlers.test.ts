// The TF.js importer's op handlers one at a time: a hand-written TF node, a real ConvertContext, and
// the ONNX nodes the handler wrote (decoded from the serialized graph). What the converted graphs
// compute is checked against tfjs in tfjs-ops.test.ts; this pins what each handler emits.
import { describe, expect, it } from 'vitest';
import { describeModel } from '../../src/tooling/onnx-builder.ts';
import { ConvertContext, UnsupportedOpError } from '../../src/tooling/tfjs/context.ts';
import { OP_HANDLERS } from '../../src/tooling/tfjs/ops/index.ts';
import type { AttrValue, TfNode } from '../../src/tooling/tfjs/reader.ts';
import { constOf, type Value } from '../../src/tooling/tfjs/values.ts';

const tfNode = (name: string, op: string, inputs: string[] = [], attr: Record<string, AttrValue> = {}): TfNode => ({ name, op, inputs, attr });

function run(ctx: ConvertContext, n: TfNode, ins: Value[]): Value[] {
  const handler = OP_HANDLERS[n.op];
  if (!handler) throw new Error(`no handler for ${n.op}`);
  return handler(n, ins, ctx);
}

/** A context with one float32 NHWC input "x" of `shape`, declared by the Placeholder handler. */
function withInput(shape: number[]): { ctx: ConvertContext; x: Value } {
  const ctx = new ConvertContext(undefined, { x: shape });
  const [x] = run(ctx, tfNode('x', 'Placeholder', [], { dtype: 'float32' }), []);
  return { ctx, x: x! };
}

const emitted = (ctx: ConvertContext) => describeModel(ctx.builder.serialize('handler-test'));

describe('TF.js op handlers', () => {
  it('Conv2D SAME stride 2: NHWC -> NCHW, Conv with TF padding (extra at the end), OIHW weights, back to NHWC', () => {
    const { ctx, x } = withInput([1, 8, 8, 3]);
    const w = constOf('float32', [3, 3, 3, 4], new Float32Array(108)); // TF HWIO
    const attr = { padding: 'SAME', strides: [1, 2, 2, 1], dilations: [1, 1, 1, 1], data_format: 'NHWC' };
    const [y] = run(ctx, tfNode('conv', 'Conv2D', ['x', 'w'], attr), [x, w]);

    expect(y).toMatchObject({ kind: 'sym', dtype: 'float32', shape: [1, 4, 4, 4] });
    const g = emitted(ctx);
    expect(g.nodes.map((n) => n.op)).toEqual(['Transpose', 'Conv', 'Transpose']);
    const [toNchw, conv, toNhwc] = g.nodes as [(typeof g.nodes)[0], (typeof g.nodes)[0], (typeof g.nodes)[0]];
    expect(toNchw.inputs).toEqual(['x']);
    expect(toNchw.attrs.perm).toEqual([0, 3, 1, 2]);
    // 8 -> 4 with k 3, s 2 needs 1 pixel of padding: TF puts it after, so [top, left, bottom, right] = [0, 0, 1, 1].
    expect(conv.attrs).toEqual({ kernel_shape: [3, 3], strides: [2, 2], dilations: [1, 1], pads: [0, 0, 1, 1], group: 1 });
    expect(conv.inputs[0]).toBe(toNchw.outputs[0]);
    expect(g.initializerDims[conv.inputs[1]!]).toEqual([4, 3, 3, 3]); // ONNX OIHW
    expect(toNhwc.inputs).toEqual(conv.outputs);
    expect(toNhwc.attrs.perm).toEqual([0, 2, 3, 1]);
    expect(toNhwc.outputs).toEqual([(y as { name: string }).name]);
  });

  it('Add folds constants in JS and emits nothing; with a symbolic input it emits one Add', () => {
    const { ctx, x } = withInput([1, 2, 2, 3]);
    const k = constOf('float32', [3], Float32Array.from([1, 2, 3]));
    const [folded] = run(ctx, tfNode('sum', 'AddV2', ['k', 'k']), [k, k]);
    expect(folded).toMatchObject({ kind: 'const', shape: [3] });
    expect([...(folded as { data: Float32Array }).data]).toEqual([2, 4, 6]);
    expect(ctx.builder.nodeCount).toBe(0);

    const [y] = run(ctx, tfNode('add', 'AddV2', ['x', 'k']), [x, k]);
    expect(y).toMatchObject({ kind: 'sym', shape: [1, 2, 2, 3] });
    const g = emitted(ctx);
    expect(g.nodes.map((n) => [n.op, n.inputs])).toEqual([['Add', ['x', 'add/b']]]);
    expect(g.initializerDims['add/b']).toEqual([3]);
  });

  it('Shape of a static input is a constant: no ONNX node', () => {
    const { ctx, x } = withInput([1, 4, 6, 2]);
    const [s] = run(ctx, tfNode('sh', 'Shape', ['x'], { out_type: 'int32' }), [x]);
    expect(s).toMatchObject({ kind: 'const', dtype: 'int32', shape: [4] });
    expect([...(s as { data: Int32Array }).data]).toEqual([1, 4, 6, 2]);
    expect(ctx.builder.nodeCount).toBe(0);
  });

  it('an input the importer needs constant fails naming the op and the node', () => {
    const { ctx, x } = withInput([1, 4, 4, 3]);
    expect(() => run(ctx, tfNode('m/mean', 'Mean', ['x', 'x']), [x, x])).toThrow(UnsupportedOpError);
    expect(() => run(ctx, tfNode('m/mean', 'Mean', ['x', 'x']), [x, x])).toThrow('unsupported op Mean at node "m/mean": reduction axes must be constant');
  });

  it('the table has no handler for unknown ops, nor for names an object inherits', () => {
    expect(OP_HANDLERS.Conv2D).toBeTypeOf('function');
    for (const op of ['Cumsum', 'constructor', 'toString', '__proto__']) expect(OP_HANDLERS[op], op).toBeUndefined();
  });
});
