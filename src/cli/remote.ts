/**
 * Remote mode: the same request over HTTP to a running `cards serve` (ofetch). What comes
 * back is a cards answer or a CardsError that says what happened on the way: a server
 * that could not be reached (nothing was sent), one that did not answer in time, a proxy's
 * own answer, a redirect, a body that is not JSON. A write whose answer was lost after it
 * was sent may have been applied: the error says so and names its Idempotency-Key.
 */
import { BlockList, isIP } from "node:net";
import { ofetch } from "ofetch";
import { leading } from "../domain/codepoints.ts";
import { CardsError, EXIT_CODE, type ErrorEnvelope } from "../domain/errors.ts";
import type { ApiRequest } from "../api/types.ts";
import type { CliGlobals, RawResponse } from "./client.ts";

/** How long one call may take, unless --timeout or CARDS_TIMEOUT says otherwise. */
export const DEFAULT_TIMEOUT_S = 60;
/** The same for an artifact upload or download, which carries up to 64 MiB. */
export const DEFAULT_TRANSFER_TIMEOUT_S = 600;

/** Errors that mean the request never left this machine: nothing can have been applied. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EPROTO", "ENETUNREACH", "EHOSTUNREACH", "ConnectionRefused", "FailedToOpenSocket"]);
/** A certificate the TLS handshake refused (before any request was sent): CERT_HAS_EXPIRED, SELF_SIGNED_CERT_IN_CHAIN, ... */
const CERT_REFUSED = /CERT|SELF_SIGNED|ISSUER|VERIFY|HOSTNAME_MISMATCH|ALTNAME/;

/** --timeout, else CARDS_TIMEOUT: seconds (a decimal) a remote call may take; undefined when neither is set. */
export function timeoutSeconds(g: CliGlobals): number | undefined {
  const [given, from] = g.timeout !== undefined ? [g.timeout, "--timeout"] : [g.env.CARDS_TIMEOUT || undefined, "CARDS_TIMEOUT"];
  if (given === undefined) return undefined;
  const n = Number(given);
  if (!/^\d+(\.\d+)?$/.test(given.trim()) || !(n > 0) || n > 86_400) {
    throw new CardsError("usage", `${from} ${JSON.stringify(given)} is not a number of seconds between 0 and 86400`, { field: from, value: given, hint: `for example ${from === "--timeout" ? "--timeout 120" : "CARDS_TIMEOUT=120"}` });
  }
  return n;
}

export interface RemoteOptions {
  /** answer with the raw bytes (artifact downloads) */
  wantBytes?: boolean;
  /** seconds the whole call may take, the body included */
  timeoutS: number;
  /** the environment, for the proxy its HTTP_PROXY / HTTPS_PROXY / NO_PROXY name (fetch goes through it) */
  env?: Record<string, string | undefined>;
}

/**
 * The proxy Bun's fetch sends a request for `url` through, as the environment names it,
 * without its password; undefined when none. Bun's rules (1.4, checked against its fetch):
 * `https_proxy` before `HTTPS_PROXY` for an https URL, `http_proxy` before `HTTP_PROXY`
 * for http (an https URL never takes HTTP_PROXY), else `all_proxy` / `ALL_PROXY` when it is
 * an http(s) one; an empty value counts as unset and `""` as none. `no_proxy` before
 * `NO_PROXY`: entries split on commas and whitespace; `*` is every host; `HOST:PORT`
 * holds for that port only (80 / 443 when the URL names none); a name holds for itself
 * and its subdomains (`.x.com` and `*.x.com` alike); an IP address or CIDR range for an
 * address URL only.
 */
export function proxyFor(url: string, env: Record<string, string | undefined>): string | undefined {
  const u = new URL(url);
  const https = u.protocol === "https:";
  const named = (name: string): string | undefined => {
    const v = env[name.toLowerCase()] || env[name];
    return v && v !== '""' && v !== "''" ? v : undefined;
  };
  const all = named("ALL_PROXY");
  const proxy = named(https ? "HTTPS_PROXY" : "HTTP_PROXY") ?? (all && (/^https?:\/\//.test(all) || !all.includes("://")) ? all : undefined);
  if (!proxy) return undefined;
  const noProxy = [env.no_proxy, env.NO_PROXY].find((v) => v && v !== '""' && v !== "''") ?? "";
  const host = u.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const port = Number(u.port || (https ? 443 : 80));
  for (const entry of noProxy.split(/[\s,]+/)) {
    if (entry === "*") return undefined;
    // HOST:PORT or [V6]:PORT; a bare IPv6 address has colons of its own
    const m = /^\[(.*)\]:(.*)$/.exec(entry) ?? (entry.split(":").length === 2 ? /^(.*):(.*)$/.exec(entry) : null);
    if (m && (!/^\d+$/.test(m[2]!) || Number(m[2]) !== port || m[1]!.includes("/"))) continue;
    const name = (m?.[1] ?? entry).replace(/^\[|\]/g, "").toLowerCase().replace(/\.$/, "");
    if (isIP(host)) {
      if (inRange(host, name)) return undefined;
    } else {
      const domain = name.replace(/^\*?\./, "");
      if (domain && (host === domain || host.endsWith(`.${domain}`))) return undefined;
    }
  }
  return withoutPassword(proxy);
}

/** True when the address `ip` is the address or in the CIDR range `entry` (of its own family). */
function inRange(ip: string, entry: string): boolean {
  const [addr = "", bits, extra] = entry.split("/");
  const family = isIP(addr);
  if (!family || family !== isIP(ip) || extra !== undefined) return false;
  const max = family === 4 ? 32 : 128;
  const n = bits === undefined ? max : /^\d+$/.test(bits) ? Number(bits) : NaN;
  if (!(n >= 0 && n <= max)) return false;
  const list = new BlockList();
  list.addSubnet(addr, n, family === 4 ? "ipv4" : "ipv6");
  return list.check(ip, family === 4 ? "ipv4" : "ipv6");
}

export async function remoteRequest(baseUrl: string, req: ApiRequest, o: RemoteOptions): Promise<RawResponse> {
  const base = apiBase(baseUrl);
  const shown = withoutPassword(base);
  const qs = new URLSearchParams(req.query).toString();
  const url = `${base}/v1${req.path}${qs ? `?${qs}` : ""}`;
  const what = `${req.method} /v1${req.path}`;
  const write = req.method !== "GET" && req.method !== "HEAD";
  const key = req.headers["idempotency-key"];
  // an upload carries no key (its bytes are not in the request's hash): a lost one is re-read
  const upload = req.stream instanceof Uint8Array ? `cards cards get ${req.path.split("/")[2] ?? "ID"}` : undefined;
  let outgoing: Headers;
  try {
    outgoing = new Headers({ ...(req.body !== undefined ? { "content-type": "application/json" } : {}), ...req.headers });
  } catch (e) {
    // a value fetch cannot carry is refused before any connection: nothing was sent
    throw new CardsError("bad_request", `cannot send ${what}: ${(e as Error).message}; nothing was sent`, {
      hint: "a header holds text HTTP cannot carry (--type, --idempotency-key): give it in ASCII and run the command again",
    });
  }
  let res: Awaited<ReturnType<typeof ofetch.raw>>;
  try {
    const raw = req.stream instanceof Uint8Array ? req.stream : undefined;
    res = await ofetch.raw(url, {
      method: req.method as "GET",
      headers: outgoing,
      body: raw ?? req.body,
      responseType: o.wantBytes ? "arrayBuffer" : "text",
      ignoreResponseError: true,
      retry: 0,
      // a redirect is not followed: fetch would send a POST or a DELETE on as a GET
      redirect: "manual",
      // the whole call, the body included (ofetch's own timeout stops at the headers)
      signal: AbortSignal.timeout(o.timeoutS * 1000),
    });
  } catch (e) {
    type Cause = { code?: unknown; name?: unknown; message?: unknown };
    const cause: Cause = (e as { cause?: Cause }).cause ?? (e as Cause);
    const code = typeof cause.code === "string" ? cause.code : undefined;
    if (cause.name === "TimeoutError" || (e as Error).name === "TimeoutError") {
      throw lost(`${shown} did not answer ${what} within ${o.timeoutS} s`, write, key, "raise the limit with --timeout SECONDS or CARDS_TIMEOUT if the server is slow, else check it and the network", upload);
    }
    const proxy = proxyFor(url, o.env ?? {});
    if (code === "UnsupportedProxyProtocol") {
      // fetch takes http:// and https:// proxies only and fails before it connects
      throw new CardsError("usage", `cannot reach ${shown} through the proxy ${proxy ?? "the environment names"}: fetch takes only http:// and https:// proxies; nothing was sent`, {
        hint: "set HTTP_PROXY / HTTPS_PROXY to http://HOST:PORT (a SOCKS proxy is not supported), or list the host in NO_PROXY",
      });
    }
    if (code === "ERR_PROXY_TUNNEL") {
      // the proxy answered CONNECT with an error (407: credentials): the server saw nothing
      throw new CardsError("unavailable", `cannot reach ${shown} through the proxy ${proxy ?? "the environment names"}: ${String(cause.message ?? code)}; nothing was sent`, {
        hint: "check the proxy (HTTPS_PROXY / HTTP_PROXY) and the credentials in its URL (http://USER:PASS@HOST:PORT), or list the host in NO_PROXY",
      });
    }
    if (code !== undefined && NOT_SENT.has(code)) {
      throw new CardsError("unavailable", `cannot reach ${proxy ? `${shown} through the proxy ${proxy}` : shown}: ${String(cause.message ?? code)}`, {
        hint: proxy
          ? "check that the proxy in HTTP_PROXY / HTTPS_PROXY is running, or list the host in NO_PROXY; then that `cards serve` is running and CARDS_URL / --url points at it (nothing was sent)"
          : "check that `cards serve` is running and CARDS_URL / --url points at it (nothing was sent)",
      });
    }
    if (code !== undefined && CERT_REFUSED.test(code)) {
      throw new CardsError("unavailable", `cannot reach ${shown}: its certificate was refused (${code}: ${String(cause.message ?? code)}); nothing was sent`, {
        hint: "check the URL's host; a certificate from a private CA (or a TLS-inspecting proxy) is trusted with NODE_EXTRA_CA_CERTS=/path/to/ca.pem",
      });
    }
    throw lost(`the connection to ${shown} failed during ${what}: ${String(cause.message ?? (e as Error).message)}`, write, key, "check the server and the network", upload);
  }
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => { headers[k] = v; });
  const type = headers["content-type"] ?? "";
  if (res.status >= 300 && res.status < 400) throw redirected(shown, what, res.status, headers.location);
  if (o.wantBytes && res.status < 400) return { status: res.status, text: "", bytes: new Uint8Array(res._data as ArrayBuffer), headers };
  const text = o.wantBytes ? new TextDecoder().decode(res._data as ArrayBuffer) : ((res._data as string | undefined) ?? "");
  // every answer of the cards API but a download is JSON: anything else is another server
  // or a proxy in front of one
  if (!type.includes("json")) {
    if (res.status === 413) {
      throw new CardsError("payload_too_large", `${what}: ${shown} refused the request body as too large (413)`, { hint: "see docs/limits.md; a proxy in front of the server may set a lower limit" });
    }
    if (res.status === 431) {
      // Bun's HTTP parser answers before any route runs: past 16 KiB of request line and headers
      throw new CardsError("bad_request", `${what}: ${shown} refused the request's URL and headers as too long (431; at most 16 KiB)`, {
        hint: "shorten what goes in the query (q, ids, filters); see docs/limits.md",
      });
    }
    throw notCards(shown, base, res.status, headers, `${what} answered ${res.status} ${type || "without a content type"}`, write, key, upload);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    if (res.status >= 400) throw notCards(shown, base, res.status, headers, `${what} answered ${res.status} with a body that is not JSON (${excerpt(text)})`, write, key, upload);
    throw lost(`${shown} answered ${what} with ${res.status} and a body that is not JSON (${excerpt(text)})`, write, key, "a proxy in front of the server may have cut or replaced the answer", upload);
  }
  if (res.status >= 400 && !isEnvelope(body)) {
    throw notCards(shown, base, res.status, headers, `${what} answered ${res.status} with ${excerpt(text)}, not a cards error`, write, key, upload);
  }
  if (res.status === 404 && isNoRoute(body) && new URL(base).pathname !== "/") {
    const path = new URL(base).pathname;
    throw new CardsError("not_found", (body as ErrorEnvelope).message, {
      hint: `CARDS_URL / --url has the path ${path}: the server answers under ${new URL(base).origin}/v1, unless a proxy maps ${path}; try ${withoutPassword(new URL(base).origin)}`,
    });
  }
  return { status: res.status, text, body, headers };
}

/** The base URL as given, without a trailing slash or /v1; one with a query, a fragment or no host is a usage error. */
export function apiBase(given: string): string {
  let u: URL | undefined;
  try { u = new URL(given); } catch { /* refused below */ }
  const bad = (why: string, hint = "the base URL `cards serve` printed, such as http://127.0.0.1:4777") =>
    new CardsError("usage", `CARDS_URL / --url ${JSON.stringify(withoutPassword(given))} ${why}`, { field: "--url", hint });
  if (!u || !u.hostname) throw bad("is not a URL with a host");
  if (u.search || u.hash) throw bad("has a query or a fragment; it is a base URL the API paths are added to");
  const path = u.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  if (/\/ui$/.test(path)) throw bad("is the board's address (/ui)", `drop /ui: ${withoutPassword(u.origin + path.slice(0, -3))}`);
  const userinfo = u.username ? `${u.username}${u.password ? `:${u.password}` : ""}@` : "";
  return `${u.protocol}//${userinfo}${u.host}${path}`;
}

/**
 * `url` with a password in it shown as ***, for messages that land in logs and transcripts.
 * Read on the raw text, never parsed: a proxy value without a scheme (`user:secret@host:9`)
 * or one a URL parser refuses (`http://user:se/cret@host`) hides it too. Between an
 * optional `scheme://` and the last `@`, what follows the first `:` is the password (an
 * `@` in a path after a port hides a little more than it must, never less).
 */
export function withoutPassword(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  const rest = url.slice(scheme.length);
  const at = rest.lastIndexOf("@");
  const colon = rest.indexOf(":");
  return colon >= 0 && colon < at ? `${scheme}${rest.slice(0, colon)}:***${rest.slice(at)}` : url;
}

/** The start of a body for a message: one line, at most 120 characters, quoted. */
export const excerpt = (text: string): string => {
  const t = text.replace(/\s+/g, " ").trim();
  return t ? JSON.stringify(t.length > 120 ? `${leading(t, 120)}…` : t) : "an empty body";
};

/** A cards error answer: a known code and a message (a proxy's JSON has neither). */
export function isEnvelope(body: unknown): body is ErrorEnvelope {
  const b = body as { error?: unknown; message?: unknown } | null;
  return typeof b === "object" && b !== null && typeof b.error === "string" && Object.hasOwn(EXIT_CODE, b.error) && typeof b.message === "string";
}

const isNoRoute = (body: unknown): boolean => isEnvelope(body) && body.error === "not_found" && body.message.startsWith("no route ");

/**
 * The error for a write whose answer did not arrive after it was sent: it may have been
 * applied. Its Idempotency-Key makes the retry safe: a write already applied answers as
 * it did, and is not applied twice.
 */
function lost(message: string, write: boolean, key: string | undefined, hint: string, upload?: string): CardsError {
  if (!write) return new CardsError("unavailable", message, { hint: `${hint}; a read is safe to retry` });
  return new CardsError("unavailable", `${message}; the write may have been applied`, {
    hint: key
      ? `retry with --idempotency-key ${key}: if it was applied, the retry answers as it did and applies nothing twice (keys are kept 7 days)`
      : upload
        ? `re-read the card (${upload}) and check its field before uploading again; ${hint}`
        : `re-read before retrying (a card created or claimed may be there: cards cards list --owner me, or --q with its title); ${hint}`,
  });
}

/** A 3xx: not followed (fetch would send a POST or a DELETE on as a GET). */
export function redirected(shown: string, what: string, status: number, to: string | null | undefined): CardsError {
  return new CardsError("unavailable", `${shown} answered ${what} with a redirect (${status}${to ? ` to ${withoutPassword(to)}` : ""}); redirects are not followed, so a write is never sent on as a read`, {
    hint: to ? `set CARDS_URL / --url to the address it redirects to (the part before /v1)` : "CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT)",
  });
}

/** An answer that is not the cards API's: a proxy's own (rate limit, a server down behind it), or another server. */
export function notCards(shown: string, base: string, status: number, headers: Record<string, string>, what: string, write: boolean, key: string | undefined, upload?: string): CardsError {
  if (status === 407) {
    // only a proxy asks this, before it forwards anything: the server saw nothing
    return new CardsError("unavailable", `a proxy between here and ${shown} asks for credentials: ${what}; nothing reached the server`, {
      hint: "put them in the proxy's URL (HTTP_PROXY=http://USER:PASS@HOST:PORT), or list the host in NO_PROXY",
    });
  }
  if (status === 429) {
    const after = headers["retry-after"];
    return new CardsError("unavailable", `${shown} is rate limited: ${what}`, { hint: after ? `retry after ${after} s (Retry-After)` : "retry later" });
  }
  // a proxy's 502/503/504 may come after the server applied the write; for a read, the
  // server behind it is down or unreachable, not the URL wrong
  if (status >= 500) return lost(`${shown} (or a proxy in front of it): ${what}`, write, key, "the cards server behind it may be down: check that `cards serve` is running there, then retry", upload);
  return new CardsError("unavailable", `${shown} is not a cards server: ${what}`, {
    hint: new URL(base).pathname !== "/" ? "CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT), without a path unless a proxy maps one" : "CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT)",
  });
}
