// Tests read test/fixtures/ and never write there (an image a test makes stays in memory or in a
// temp folder). Run before every test file (vitest `setupFiles`): lists the folder before the
// file's module loads and fails the file if anything in it was added, removed or changed by its end.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, expect } from 'vitest';

const FIXTURES = path.resolve('test/fixtures');

function listing(): string[] {
  return (fs.readdirSync(FIXTURES, { recursive: true }) as string[]).sort().map((f) => {
    const st = fs.statSync(path.join(FIXTURES, f));
    return `${f} ${st.size} ${st.mtimeMs}`;
  });
}

const before = listing();
afterAll(() => {
  expect(listing(), 'a test wrote into test/fixtures/').toEqual(before);
});
