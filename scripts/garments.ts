// npm run demo helpers: write the test garments (drawn by the project) to files, and with
// `--dev-photos` the try-on development photos (test/helpers/tryon-dev-set.ts) too.
import fs from 'node:fs';
import { dress, longSleeve, skirt, trousers, tshirt } from '../test/helpers/garments.ts';
import { TRYON_DEV_NAMES, tryonPhoto } from '../test/helpers/tryon-dev-set.ts';
const dir = process.argv[2] ?? '.';
// A new folder is made (the README's steps name one that need not exist yet).
fs.mkdirSync(dir, { recursive: true });
const garments = { tshirt, trousers, dress, 'long-sleeve': longSleeve, skirt };
for (const [name, draw] of Object.entries(garments)) fs.writeFileSync(`${dir}/garment-${name}.png`, await draw());
console.log(`wrote ${dir}/garment-{${Object.keys(garments).join(',')}}.png`);
if (process.argv.includes('--dev-photos')) {
  for (const name of TRYON_DEV_NAMES) fs.writeFileSync(`${dir}/person-${name}.jpg`, await tryonPhoto(name));
  console.log(`wrote ${dir}/person-{${TRYON_DEV_NAMES.join(',')}}.jpg`);
}
