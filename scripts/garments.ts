// npm run demo helpers: write the test garments (drawn by the project) to files.
import fs from 'node:fs';
import { dress, trousers, tshirt } from '../test/helpers/garments.ts';
const dir = process.argv[2] ?? '.';
fs.writeFileSync(`${dir}/garment-tshirt.png`, await tshirt());
fs.writeFileSync(`${dir}/garment-trousers.png`, await trousers());
fs.writeFileSync(`${dir}/garment-dress.png`, await dress());
console.log(`wrote ${dir}/garment-{tshirt,trousers,dress}.png`);
