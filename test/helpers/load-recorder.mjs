// `node --import tsx --import ./test/helpers/load-recorder.mjs <entry>`: records the URL of every
// module the process resolves (ESM loader hooks, run after tsx's so the URLs are final) into the
// file named by LOAD_RECORD_FILE, one per line. Used to check what a process entry really loads.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    import fs from 'node:fs';
    let file;
    export async function initialize(data) { file = data.file; }
    export async function resolve(specifier, context, next) {
      const r = await next(specifier, context);
      fs.appendFileSync(file, r.url + '\\n');
      return r;
    }
  `)}`,
  { data: { file: process.env.LOAD_RECORD_FILE } },
);
