// The ONLY importer of undici: every request the service makes to a URL a user gave (input files,
// webhooks). Applies the outbound policy: http(s) only, and unless ALLOW_PRIVATE_URLS, no target in
// a loopback, private, link-local or otherwise non-public range (SSRF). The check runs on each
// connection's DNS answer too, so a name that re-resolves to a private address (DNS rebinding)
// is still refused. Refusals tell the caller what was refused, never what the resolver answered
// (that would let a caller probe internal DNS): a name that does not resolve is refused in the
// same words as one that resolves to a private address. The answers go to the server log.
import dns from 'node:dns';
import net from 'node:net';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { classifyAddress } from '../domain/addresses.ts';
import { silentLogger, type Logger } from '../domain/logger.ts';
import { AppError } from '../errors/codes.ts';

export type HttpResponse = Response;

export interface OutboundPolicy {
  allowPrivate: boolean;
}

const NOT_ALLOWED = 'ERR_URL_NOT_ALLOWED';

/** What a caller is told, whatever the resolver answered (see the header). */
export const NOT_PUBLIC = "the URL's host is not a public address";

function refusal(): Error {
  return Object.assign(new Error(NOT_PUBLIC), { code: NOT_ALLOWED });
}

/** The first address that is not public, with its range; undefined when all are public. */
function firstNonPublic(addresses: string[]): { address: string; range: string; embedded: string[] } | undefined {
  for (const address of addresses) {
    const c = classifyAddress(address);
    if (!c.isPublic) return { address, range: c.range, embedded: c.embedded };
  }
  return undefined;
}

type LookupCallback = (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

/** dns.lookup with `all: true`: the resolver the policy checks the answers of. */
export type LookupAll = (
  host: string,
  options: dns.LookupAllOptions,
  cb: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void,
) => void;

const systemLookup: LookupAll = (host, options, cb) => dns.lookup(host, options, cb);

export class OutboundHttp {
  private readonly agent: Agent;
  private readonly log: Logger;
  private readonly lookup: LookupAll;

  /** `lookup` replaces the system resolver (tests answer with the address under test). */
  constructor(
    private readonly policy: OutboundPolicy,
    deps: { log?: Logger; lookup?: LookupAll } = {},
  ) {
    const log = (this.log = deps.log ?? silentLogger);
    const lookup = (this.lookup = deps.lookup ?? systemLookup);
    const guardedLookup = (host: string, options: dns.LookupOptions, cb: LookupCallback) => {
      lookup(host, { ...options, all: true }, (err, addresses) => {
        if (err && !policy.allowPrivate) {
          log.info({ host, err: err.code ?? err.message }, 'outbound connection refused: host does not resolve');
          return cb(refusal(), []);
        }
        if (err) return cb(err, []);
        if (!policy.allowPrivate) {
          const bad = firstNonPublic(addresses.map((a) => a.address));
          if (bad) {
            log.warn({ host, ...bad }, 'outbound connection refused: not a public address');
            return cb(refusal(), []);
          }
        }
        if (options.all) return cb(null, addresses);
        const first = addresses[0]!;
        cb(null, first.address, first.family);
      });
    };
    this.agent = new Agent({ connect: { lookup: guardedLookup as never }, keepAliveTimeout: 4_000 });
  }

  /**
   * Create-time check of a URL a user gave (`what` names it in the message): scheme, and every
   * address the host resolves to. Throws URL_NOT_ALLOWED.
   */
  async check(url: string, what: string): Promise<void> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw new AppError('URL_NOT_ALLOWED', `${what}: not a valid URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new AppError('URL_NOT_ALLOWED', `${what}: only http(s) URLs are allowed`);
    if (this.policy.allowPrivate) return;
    const host = u.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (net.isIP(host)) addresses = [host];
    else {
      try {
        addresses = (await this.lookupAll(host)).map((a) => a.address);
      } catch (e) {
        this.log.info({ what, host, err: (e as { code?: string }).code ?? String(e) }, 'URL refused: host does not resolve');
        throw new AppError('URL_NOT_ALLOWED', `${what}: ${NOT_PUBLIC}`);
      }
    }
    const bad = firstNonPublic(addresses);
    if (bad) {
      this.log.warn({ what, host, ...bad }, 'URL refused: not a public address');
      throw new AppError('URL_NOT_ALLOWED', `${what}: ${NOT_PUBLIC}`);
    }
  }

  private lookupAll(host: string): Promise<dns.LookupAddress[]> {
    return new Promise((resolve, reject) => this.lookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));
  }

  /** fetch() through the guarded agent. Never follows redirects itself. */
  async fetch(url: string | URL, init: Omit<RequestInit, 'dispatcher' | 'redirect'> = {}): Promise<Response> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // A literal IP needs no lookup, so the guarded lookup never sees it: check it here.
    const bad = !this.policy.allowPrivate && net.isIP(host) ? firstNonPublic([host]) : undefined;
    if (bad) {
      this.log.warn({ host, ...bad }, 'outbound request refused: not a public address');
      throw refusal();
    }
    return fetch(u, { ...init, redirect: 'manual', dispatcher: this.agent });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** True when a fetch failed because the policy refused its target. */
export function isPolicyRefusal(e: unknown): e is Error {
  const err = e as { code?: string; cause?: { code?: string } };
  return err?.code === NOT_ALLOWED || err?.cause?.code === NOT_ALLOWED;
}
