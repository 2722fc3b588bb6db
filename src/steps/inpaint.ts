// Step: fill masked pixels from their surroundings (the push-pull graph this project builds,
// src/tooling/generated/push-pull-inpaint.ts). A learned inpainting model with the same inputs
// could replace the graph.
//   input  "image" float32 [1, 3, H, W] NCHW, RGB in [0, 1]; "known" float32 [1, 1, H, W], 0 in the hole
//   output float32 [1, 3, H, W], the filled picture
import { copyBytes, type RgbImage } from '../imaging/image.ts';
import type { ModelSession } from '../models/onnx.ts';

/** Fills the masked pixels from their surroundings with the push-pull graph (NCHW float in 0..1). */
export async function inpaint(session: ModelSession, img: RgbImage, hole: Uint8Array): Promise<RgbImage> {
  const { width: W, height: H } = img;
  const n = W * H;
  const chw = new Float32Array(3 * n);
  const known = new Float32Array(n);
  let holes = 0;
  for (let i = 0; i < n; i++) {
    chw[i] = img.data[3 * i]! / 255;
    chw[n + i] = img.data[3 * i + 1]! / 255;
    chw[2 * n + i] = img.data[3 * i + 2]! / 255;
    known[i] = hole[i] ? 0 : 1;
    holes += hole[i]!;
  }
  if (holes === 0) return img;
  const out = await session.run({ image: { data: chw, dims: [1, 3, H, W] }, known: { data: known, dims: [1, 1, H, W] } });
  const filled = out[session.outputNames[0]!]!.data;
  const data = copyBytes(img.data);
  for (let i = 0; i < n; i++) {
    if (!hole[i]) continue;
    for (let c = 0; c < 3; c++) data[3 * i + c] = Math.round(Math.min(1, Math.max(0, filled[c * n + i]!)) * 255);
  }
  return { data, width: W, height: H };
}

