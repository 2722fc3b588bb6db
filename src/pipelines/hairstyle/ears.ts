// Ears where the old hair hid them. Long hair over the ears, removed under a short style, was
// filled with what lies beside the head (the wall, the blinds): the face then ended at its own
// oval, a mask without ears under a cap. Each hidden ear is drawn into the fill instead, in the
// head frame (frame.ts): from the brows' height to about the nose's, standing out beside the
// face's widest point, in the tone of the cheek on its side, with the relief an ear shows from the front
// (a lit rim, the darker bowl inside it, the shadow where it meets the head) and the photo's grain
// and softness. Only where the old hair covered most of the ear (an ear the photo shows is kept as
// it is, and no second ear is drawn beside it), and only on the removal's hole.
import type { RgbImage } from '../../imaging/image.ts';
import { labAt, labToSrgb, skinColoured, srgbToLab } from '../../steps/color.ts';
import { frameBox, frameU, frameV } from './frame.ts';
import type { HeadAnalysis, Look } from './render.ts';
import { hash2, noise2, smooth } from './templates.ts';

/** The ear's extent in frame units (face widths): its height, where it starts, how far it stands out. */
export const EAR = {
  /** Top below the frame's ear level (the cheek extremes, about the tragus): about the brows. */
  top: -0.2,
  /** Bottom below the ear level: about the nose's base. */
  bottom: 0.17,
  /** How far out from the face's widest point the helix reaches at its widest, facing the camera. */
  reach: 0.13,
  /** Share of the ear (off the face) the old hair must cover: less, and the photo shows the ear itself. */
  hidden: 0.6,
} as const;

/**
 * The median CIE Lab of the face's skin on the ear's side: the kept face (protect) within 0.1-0.25
 * face widths of the oval's edge on `side`, from the brows' height to the ear level's + 0.15, on
 * skin-coloured pixels against the face's median skin `ref` (CIE Lab; lightness within 35, a cheek
 * further into the light or the shade than the face's middle; a strand over it is not skin). Null
 * with under 30.
 */
function cheekLab(an: Pick<HeadAnalysis, 'frame' | 'anchors' | 'protect'>, img: RgbImage, side: number, ref: readonly number[]): [number, number, number] | null {
  const { frame, anchors } = an;
  const W = img.width;
  const box = frameBox(frame, side < 0 ? -0.7 : 0, side < 0 ? 0 : 0.7, anchors.brows, anchors.ears + 0.15, W, img.height);
  const Ls: number[] = [], as: number[] = [], bs: number[] = [];
  for (let y = box.y0; y < box.y1; y++) {
    for (let x = box.x0; x < box.x1; x++) {
      const i = y * W + x;
      if (!an.protect[i]) continue;
      const u = frameU(frame, x + 0.5, y + 0.5) * side, v = frameV(frame, x + 0.5, y + 0.5);
      if (v < anchors.brows || v > anchors.ears + 0.15) continue;
      const edge = anchors.ovalHalfWidth(v, side) - u;
      if (edge < 0.1 || edge > 0.25) continue;
      const lab = labAt(img.data, i);
      if (!skinColoured(lab, ref, 35)) continue;
      Ls.push(lab[0]);
      as.push(lab[1]);
      bs.push(lab[2]);
    }
  }
  if (Ls.length < 30) return null;
  const med = (a: number[]) => a.sort((p, q) => p - q)[a.length >> 1]!;
  return [med(Ls), med(as), med(bs)];
}

/** An ear at `t` down its height (0 top .. 1 bottom): its reach out from the head, as a share of EAR.reach. */
function outline(t: number): number {
  if (t <= 0 || t >= 1) return 0;
  // Round at the top, widest in the upper third, the lobe narrower and tucked in at the bottom.
  const top = Math.sqrt(Math.sin((Math.PI / 2) * Math.min(1, t / 0.35)));
  const lobe = 1 - 0.45 * smooth(0.45, 1, t);
  const end = Math.sqrt(Math.max(0, 1 - ((t - 0.75) / 0.25) ** 2 * (t > 0.75 ? 1 : 0)));
  return top * lobe * end;
}

/**
 * Draws the hidden ears into `img` (the filled photo) on `hole`'s pixels. On a turned head
 * (Anchors.turn) the far ear hides behind the head and the near one stands out further. Returns
 * the number of ears drawn.
 */
export function drawEars(an: Pick<HeadAnalysis, 'frame' | 'anchors' | 'protect' | 'others' | 'skin' | 'hair'>, img: RgbImage, hole: Uint8Array, look: Pick<Look, 'edgeBlur' | 'grain' | 'lightSide' | 'monochrome'>, seed: number): number {
  const { frame, anchors } = an;
  const W = img.width, H = img.height, data = img.data;
  const px = 1 / frame.scale;
  const soft = Math.max(1, look.edgeBlur) * px;
  const skin = srgbToLab(an.skin[0], an.skin[1], an.skin[2]);
  const top = anchors.ears + EAR.top, bottom = anchors.ears + EAR.bottom, height = bottom - top;
  let drawn = 0;
  for (const side of [-1, 1]) {
    // A turned head: the near ear shows more of itself, the far one less, none past ~25 degrees.
    const toward = -side * anchors.turn;
    const reach = EAR.reach * Math.max(0, Math.min(1.5, 1 + 2.2 * toward));
    if (reach < 0.04) continue;
    const base = anchors.ovalHalfWidth(anchors.ears, side) - 0.01;
    const u0 = side < 0 ? -(base + reach + 2 * soft) : 0.2, u1 = side < 0 ? -0.2 : base + reach + 2 * soft;
    const box = frameBox(frame, u0, u1, top - 2 * soft, bottom + 2 * soft, W, H);
    if (box.x1 <= box.x0 || box.y1 <= box.y0) continue;
    // Coverage (0..1) of the ear per pixel of the box, and how much of it the hole holds.
    const bw = box.x1 - box.x0;
    const cover = new Float32Array(bw * (box.y1 - box.y0));
    let inside = 0, all = 0;
    for (let y = box.y0; y < box.y1; y++) {
      for (let x = box.x0; x < box.x1; x++) {
        const u = frameU(frame, x + 0.5, y + 0.5) * side, v = frameV(frame, x + 0.5, y + 0.5);
        const t = (v - top) / height;
        // Inner edge: the face's own side (the jaw narrows below the ear level: the skin behind it
        // is the ear's too); outer edge: the helix.
        const inner = Math.min(base, anchors.ovalHalfWidth(v, side) - 0.01);
        const outer = base + reach * outline(t);
        const d = Math.max(inner - u, u - outer, -(v - top), v - bottom);
        const c = 1 - smooth(-soft, soft, d);
        if (c <= 0) continue;
        const i = y * W + x;
        cover[(y - box.y0) * bw + x - box.x0] = c;
        // The face's own pixels are never the hole: they do not count either way.
        if (an.protect[i]) continue;
        all += c;
        if (an.hair[i]! >= 128) inside += c;
      }
    }
    if (all === 0 || inside < EAR.hidden * all) continue;
    drawn++;
    // The cheek's own colour beside it: the face's median on the lit side made the ear on the
    // shaded side glow (s5-back); where the cheek is hidden, the median a little lit or shaded.
    const cheek = cheekLab(an, img, side, skin) ?? [skin[0] * (1 + 0.12 * side * look.lightSide), skin[1], skin[2]];
    for (let y = box.y0; y < box.y1; y++) {
      for (let x = box.x0; x < box.x1; x++) {
        const c = cover[(y - box.y0) * bw + x - box.x0]!;
        const i = y * W + x;
        if (c <= 0 || !hole[i] || an.protect[i] || an.others[i]) continue;
        const u = frameU(frame, x + 0.5, y + 0.5) * side, v = frameV(frame, x + 0.5, y + 0.5);
        const t = (v - top) / height;
        const outer = base + reach * outline(t);
        const w = Math.max(1e-3, outer - base);
        const s = (u - base) / w; // 0 at the head .. 1 at the rim
        // Relief: the rim lit, the bowl inside it darker (deepest by the ear canal, in the middle
        // height), the shadow where the ear meets the head; the lobe plain.
        const rim = smooth(0.62, 0.9, s) * (1 - smooth(0.95, 1.15, s));
        const bowl = (1 - smooth(0.15, 0.7, Math.abs(s - 0.4) / 0.4)) * (1 - smooth(0.55, 0.85, t)) * smooth(0.1, 0.3, t);
        const join = 1 - smooth(-0.1, 0.25, s);
        const behind = u < base ? smooth(0, 0.06, base - u) : 0;
        const mottle = noise2(u * 40, v * 40, seed) - 0.5;
        const grain = (hash2(x, y, seed) - 0.5) * 2 * look.grain;
        const shade = 1 + 0.1 * rim - 0.22 * bowl - 0.2 * join - 0.18 * behind + 0.05 * mottle;
        // Ears are a little redder than the cheek (thin skin, blood close below); not on a
        // black-and-white photo.
        const [r, g, b] = labToSrgb(cheek[0] * shade, cheek[1] + (look.monochrome ? 0 : 4) * (1 - join) * (1 - behind), cheek[2]);
        const o = 3 * i;
        data[o] = Math.round(data[o]! * (1 - c) + Math.min(255, Math.max(0, r + grain)) * c);
        data[o + 1] = Math.round(data[o + 1]! * (1 - c) + Math.min(255, Math.max(0, g + grain)) * c);
        data[o + 2] = Math.round(data[o + 2]! * (1 - c) + Math.min(255, Math.max(0, b + grain)) * c);
      }
    }
  }
  return drawn;
}
