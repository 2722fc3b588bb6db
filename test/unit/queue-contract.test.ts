// The queue contract's shipped files match the code, and its doc states the code's version.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_DIR, contractFiles } from '../../scripts/lib/contract-files.ts';
import { QUEUE_CONTRACT_VERSION } from '../../src/queue/queue-contract.ts';

const read = (u: URL) => fs.readFileSync(u, 'utf8');

describe('queue contract', () => {
  it('contract/ holds exactly what the code builds (run `npm run contract` after a change)', () => {
    const built = contractFiles();
    for (const [rel, text] of Object.entries(built)) {
      const file = new URL(rel, CONTRACT_DIR);
      expect(fs.existsSync(file), `contract/${rel} is missing`).toBe(true);
      expect(read(file), `contract/${rel} drifted`).toBe(text);
    }
    const root = new URL(CONTRACT_DIR).pathname;
    const onDisk = fs.readdirSync(CONTRACT_DIR, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => `${e.parentPath}/${e.name}`.slice(root.length).replace(/^\/+/, ''));
    expect(onDisk.sort()).toEqual(Object.keys(built).sort());
  });

  it('the doc states the contract version of the code', () => {
    const doc = read(new URL('../../docs/queue-contract.md', import.meta.url));
    expect(doc.match(/contract version (\d+)/g)?.map((m) => Number(m.split(' ').pop()))).toContain(QUEUE_CONTRACT_VERSION);
    expect(new Set(doc.match(/contract version (\d+)/g))).toEqual(new Set([`contract version ${QUEUE_CONTRACT_VERSION}`]));
    expect(JSON.parse(read(new URL('contract.json', CONTRACT_DIR))).contract_version).toBe(QUEUE_CONTRACT_VERSION);
  });

  it('the create script is headed with its KEYS and ARGV', () => {
    const lua = contractFiles()['create-task.lua']!;
    for (let i = 1; i <= 9; i++) expect(lua).toContain(`KEYS[${i}]`);
    for (let i = 1; i <= 9; i++) expect(lua).toContain(`ARGV[${i}]`);
  });

  it("the test producer imports no project code (ioredis, bullmq and node built-ins only)", () => {
    const src = read(new URL('../helpers/contract-producer.ts', import.meta.url));
    const specs = [...src.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(specs.length).toBeGreaterThan(0);
    for (const s of specs) expect(s, s).toMatch(/^(node:.+|ioredis|bullmq)$/);
  });
});
