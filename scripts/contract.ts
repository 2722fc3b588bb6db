// npm run contract    writes the queue contract's files (contract/) from the code; see docs/queue-contract.md
import fs from 'node:fs';
import { CONTRACT_DIR, contractFiles } from './lib/contract-files.ts';

for (const [rel, text] of Object.entries(contractFiles())) {
  const file = new URL(rel, CONTRACT_DIR);
  fs.mkdirSync(new URL('.', file), { recursive: true });
  fs.writeFileSync(file, text);
  console.log(`wrote contract/${rel}`);
}
