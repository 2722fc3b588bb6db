// Downloads one input file named by URL in the task input: bounded size (declared and actual),
// bounded time (whole download), bounded redirects (each hop re-checked), and content sniffed by
// magic bytes. Every failure is an AppError whose message names the field and the reason: a short
// reason of our own words, never the socket's or TLS library's text (that stays in the error's
// cause, which the worker logs).
import { AppError } from '../errors/codes.ts';
import { sniffImageType, type ImageType } from '../imaging/sniff.ts';
import { isPolicyRefusal, NOT_PUBLIC, type HttpResponse, type OutboundHttp } from './outbound-http.ts';

export interface InputLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export interface FetchedInput {
  bytes: Uint8Array;
  type: ImageType;
  finalUrl: string;
}

const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  UND_ERR_SOCKET: 'connection closed',
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'timed out',
  UND_ERR_HEADERS_TIMEOUT: 'timed out',
  UND_ERR_BODY_TIMEOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'host unreachable',
  ENOTFOUND: 'host does not resolve',
  EAI_AGAIN: 'host does not resolve',
};

/** A short reason in our words for a failed download (the raw text may name internal hosts or certificates). */
const describeCause = (e: unknown): string => {
  const err = e as { name?: string; code?: string; cause?: { code?: string } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'timed out';
  const code = err.cause?.code ?? err.code ?? '';
  if (REASONS[code]) return REASONS[code];
  // ERR_TLS_*, ERR_SSL_*, CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, UNABLE_TO_VERIFY_LEAF_SIGNATURE ...
  if (/TLS|SSL|CERT|SIGNATURE/.test(code)) return 'TLS handshake failed';
  return 'network error';
};

/** `abort` (optional) cancels the download from outside, e.g. when the worker hands the task back. */
export async function fetchImageInput(
  http: OutboundHttp,
  field: string,
  url: string,
  limits: InputLimits,
  abort?: AbortSignal,
): Promise<FetchedInput> {
  const timeout = AbortSignal.timeout(limits.timeoutMs);
  const signal = abort ? AbortSignal.any([timeout, abort]) : timeout;
  let current = url;
  try {
    for (let hop = 0; ; hop++) {
      const u = new URL(current);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') {
        throw new AppError('INPUT_UNREACHABLE', `input.${field}: only http(s) URLs are supported (got ${u.protocol})`);
      }
      const res = await http.fetch(u, { signal, headers: { accept: 'image/jpeg, image/png, image/webp' } });
      if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
        await res.body?.cancel();
        if (hop >= limits.maxRedirects) {
          throw new AppError('INPUT_UNREACHABLE', `input.${field}: more than ${limits.maxRedirects} redirects from ${url}`);
        }
        current = new URL(res.headers.get('location')!, u).toString();
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel();
        throw new AppError('INPUT_UNREACHABLE', `input.${field}: ${current} answered HTTP ${res.status}`);
      }
      const declared = Number(res.headers.get('content-length') ?? NaN);
      if (declared > limits.maxBytes) {
        await res.body?.cancel();
        throw new AppError('INPUT_TOO_LARGE', `input.${field}: file is ${declared} bytes, above the limit of ${limits.maxBytes}`);
      }
      const bytes = await readBounded(res, field, limits.maxBytes);
      const type = sniffImageType(bytes);
      if (!type) {
        const head = Buffer.from(bytes.subarray(0, 8)).toString('hex').replace(/(..)/g, '$1 ').trim();
        throw new AppError('INPUT_NOT_IMAGE', `input.${field}: not a JPEG, PNG or WebP image (${bytes.length} bytes starting ${head || '(empty)'})`);
      }
      return { bytes, type, finalUrl: current };
    }
  } catch (e) {
    if (e instanceof AppError) throw e;
    const opts = { cause: e };
    if (isPolicyRefusal(e)) {
      const which = current === url ? NOT_PUBLIC : `redirected to ${current}: ${NOT_PUBLIC}`;
      throw new AppError('URL_NOT_ALLOWED', `input.${field}: ${which}`, undefined, opts);
    }
    throw new AppError('INPUT_UNREACHABLE', `input.${field}: could not download ${current}: ${describeCause(e)}`, undefined, opts);
  }
}

async function readBounded(res: HttpResponse, field: string, maxBytes: number): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new AppError('INPUT_TOO_LARGE', `input.${field}: file is larger than the limit of ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}
