// Waiting on a condition instead of sleeping: polls `check` until it returns something other than
// undefined/false, and fails after `timeoutMs` saying what it was waiting for (and the last value
// seen, if `describe` is given). The poll interval only bounds how soon a change is noticed; no
// test outcome depends on it.
export async function waitFor<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string; describe?: () => unknown } = {},
): Promise<T> {
  const { timeoutMs = 15_000, intervalMs = 25, what = 'condition' } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) {
      const last = opts.describe ? `; last seen: ${JSON.stringify(await opts.describe())}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
