// Push-pull inpainting as an ONNX graph (built by the project, run on the worker's execution
// provider): fills holes from their surroundings at every scale, smoothly, in O(pixels).
//   inputs  "image"  float32 [1, 3, H, W] NCHW, any range
//           "known"  float32 [1, 1, H, W] 1 where the pixel is kept, 0 where it is filled (soft ok)
//   output  "filled" float32 [1, 3, H, W]: known pixels blended with the fill by `known`
// Pull: average-pool image*known and known by 2 (ceil mode) `levels` times; each level's colour is
// their ratio where any known pixel fell. Push: from the coarsest level down, each level keeps its
// known colour and takes the bilinear upsample of the level above elsewhere.
import { OnnxGraphBuilder } from '../onnx-builder.ts';

export function buildPushPullInpaint(params: { levels: number }): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.input('image', 'float32', [1, 3, 'H', 'W']);
  b.input('known', 'float32', [1, 1, 'H', 'W']);
  const eps = b.initializer('eps', 'float32', [], new Float32Array([1e-6]));
  const big = b.initializer('big', 'float32', [], new Float32Array([1e3]));
  const one = b.initializer('one', 'float32', [], new Float32Array([1]));
  const pool = (x: string, name: string) => b.op('AveragePool', [x], { kernel_shape: [2, 2], strides: [2, 2], ceil_mode: 1, count_include_pad: 0 }, name);

  // Level 0 is the image itself; levels 1..L are the pulled averages.
  const colour: string[] = ['image'];
  const mask: string[] = ['known'];
  let weighted = b.op('Mul', ['image', 'known'], {}, 'weighted0');
  let coverage = 'known';
  for (let l = 1; l <= params.levels; l++) {
    const s = pool(weighted, `sum${l}`);
    const c = pool(coverage, `cov${l}`);
    const v = b.op('Div', [s, b.op('Max', [c, eps])], {}, `colour${l}`);
    const m = b.op('Min', [b.op('Mul', [c, big]), one], {}, `known${l}`);
    colour.push(v);
    mask.push(m);
    weighted = b.op('Mul', [v, m], {}, `weighted${l}`);
    coverage = m;
  }
  // Push back down.
  let filled = colour[params.levels]!;
  for (let l = params.levels - 1; l >= 0; l--) {
    const up = b.op('Resize', [filled, '', '', b.op('Shape', [colour[l]!])], { mode: 'linear', coordinate_transformation_mode: 'half_pixel' }, `up${l}`);
    const keep = b.op('Mul', [colour[l]!, mask[l]!]);
    const take = b.op('Mul', [up, b.op('Sub', [one, mask[l]!])]);
    filled = b.op('Add', [keep, take], {}, l === 0 ? 'filled_raw' : `filled${l}`);
  }
  b.node('Identity', [filled], ['filled']);
  b.output('filled', 'float32', [1, 3, 'H', 'W']);
  return b.serialize('push-pull-inpaint');
}
