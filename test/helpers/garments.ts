// Garment images for the try-on tests, drawn by the project (SVG on white): a striped T-shirt,
// checked trousers, a polka-dot dress, a long-sleeved top and a dotted skirt. Their colours and
// patterns are what the tests look for.
import sharp from 'sharp';

export const GARMENT_COLORS = {
  shirt: { main: [200, 30, 40], second: [250, 250, 250] },
  trousers: { main: [30, 50, 120], second: [220, 190, 60] },
  dress: { main: [30, 140, 80], second: [255, 255, 255] },
} as const;

const rgb = (c: readonly number[]) => `rgb(${c.join(',')})`;

export async function tshirt(): Promise<Buffer> {
  const { main, second } = GARMENT_COLORS.shirt;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="440">
    <defs><pattern id="s" width="40" height="40" patternUnits="userSpaceOnUse"><rect width="40" height="40" fill="${rgb(main)}"/><rect y="22" width="40" height="18" fill="${rgb(second)}"/></pattern></defs>
    <rect width="400" height="440" fill="#ffffff"/>
    <path d="M140 30 Q200 70 260 30 L330 60 L395 150 L335 185 L305 140 L305 420 L95 420 L95 140 L65 185 L5 150 L70 60 Z" fill="url(#s)" stroke="#7a0f16" stroke-width="3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export async function trousers(): Promise<Buffer> {
  const { main, second } = GARMENT_COLORS.trousers;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="360" height="560">
    <defs><pattern id="c" width="36" height="36" patternUnits="userSpaceOnUse"><rect width="36" height="36" fill="${rgb(main)}"/><rect x="15" width="6" height="36" fill="${rgb(second)}"/><rect y="15" width="36" height="6" fill="${rgb(second)}"/></pattern></defs>
    <rect width="360" height="560" fill="#ffffff"/>
    <path d="M70 20 L290 20 L320 540 L200 540 L180 200 L160 540 L40 540 Z" fill="url(#c)" stroke="#101a40" stroke-width="3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

export async function dress(): Promise<Buffer> {
  const { main, second } = GARMENT_COLORS.dress;
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="600">
    <defs><pattern id="d" width="34" height="34" patternUnits="userSpaceOnUse"><rect width="34" height="34" fill="${rgb(main)}"/><circle cx="17" cy="17" r="6" fill="${rgb(second)}"/></pattern></defs>
    <rect width="400" height="600" fill="#ffffff"/>
    <path d="M130 20 Q200 60 270 20 L290 40 L280 230 L370 580 L30 580 L120 230 L110 40 Z" fill="url(#d)" stroke="#0f4a2a" stroke-width="3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** A long-sleeved top, sleeves angled down (a flat-lay product photo), plain navy with a thin stripe. */
export async function longSleeve(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="440" height="460">
    <defs><pattern id="l" width="30" height="30" patternUnits="userSpaceOnUse"><rect width="30" height="30" fill="rgb(40,60,150)"/><rect y="24" width="30" height="6" fill="rgb(240,200,60)"/></pattern></defs>
    <rect width="440" height="460" fill="#ffffff"/>
    <path d="M160 30 Q220 70 280 30 L345 55 L430 330 L380 345 L320 170 L320 440 L120 440 L120 170 L60 345 L10 330 L95 55 Z" fill="url(#l)" stroke="#101a40" stroke-width="3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** An A-line skirt, orange with white dots. */
export async function skirt(): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="400" height="420">
    <defs><pattern id="k" width="30" height="30" patternUnits="userSpaceOnUse"><rect width="30" height="30" fill="rgb(230,120,30)"/><circle cx="15" cy="15" r="4" fill="#fff"/></pattern></defs>
    <rect width="400" height="420" fill="#ffffff"/>
    <path d="M120 20 L280 20 L370 400 L30 400 Z" fill="url(#k)" stroke="#803000" stroke-width="3"/></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}
