// The ONLY importer of undici: every request the service makes to a URL a user gave (input files,
// webhooks). Applies the outbound policy: http(s) only, and unless ALLOW_PRIVATE_URLS, no target in
// a loopback, private, link-local or otherwise non-public range (SSRF). The check runs on each
// connection's DNS answer too, so a name that re-resolves to a private address (DNS rebinding)
// is still refused.
import dns from 'node:dns';
import net from 'node:net';
import { Agent, fetch, type RequestInit, type Response } from 'undici';
import { isNonPublicAddress } from '../domain/addresses.ts';
import { AppError } from '../errors/codes.ts';

export type HttpResponse = Response;

export interface OutboundPolicy {
  allowPrivate: boolean;
}

const NOT_ALLOWED = 'ERR_URL_NOT_ALLOWED';

function refusal(host: string, address: string): Error {
  return Object.assign(new Error(`${host} resolves to ${address}, a non-public address (set ALLOW_PRIVATE_URLS=true to allow)`), {
    code: NOT_ALLOWED,
  });
}

type LookupCallback = (err: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

export class OutboundHttp {
  private readonly agent: Agent;

  constructor(private readonly policy: OutboundPolicy) {
    const guardedLookup = (host: string, options: dns.LookupOptions, cb: LookupCallback) => {
      dns.lookup(host, { ...options, all: true }, (err, addresses) => {
        if (err) return cb(err, []);
        if (!policy.allowPrivate) {
          const bad = addresses.find((a) => isNonPublicAddress(a.address));
          if (bad) return cb(refusal(host, bad.address), []);
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
        addresses = (await dns.promises.lookup(host, { all: true })).map((a) => a.address);
      } catch (e) {
        throw new AppError('URL_NOT_ALLOWED', `${what}: host ${host} does not resolve (${(e as { code?: string }).code ?? 'error'})`);
      }
    }
    const bad = addresses.find(isNonPublicAddress);
    if (bad) throw new AppError('URL_NOT_ALLOWED', `${what}: ${refusal(host, bad).message}`);
  }

  /** fetch() through the guarded agent. Never follows redirects itself. */
  async fetch(url: string | URL, init: Omit<RequestInit, 'dispatcher' | 'redirect'> = {}): Promise<Response> {
    const u = new URL(url);
    const host = u.hostname.replace(/^\[|\]$/g, '');
    // A literal IP needs no lookup, so the guarded lookup never sees it: check it here.
    if (!this.policy.allowPrivate && net.isIP(host) && isNonPublicAddress(host)) throw refusal(host, host);
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

/** The refusal's message, from the error or its cause. */
export function refusalMessage(e: unknown): string {
  const err = e as { code?: string; message?: string; cause?: { message?: string } };
  return err.code === NOT_ALLOWED ? err.message ?? '' : err.cause?.message ?? '';
}
