/**
 * Serving an h3 app. On Bun the app's fetch goes straight to Bun.serve: srvx's request
 * wrapper cost ~10% of a point read (perf-baselines.md §4, docs/decisions.md); on other
 * runtimes h3's serve() (srvx) picks Deno.serve or node:http.
 */
import { serve, type H3 } from "h3";

export interface RunningServer {
  url: string;
  /** stops accepting; `force` also cuts connections still open (otherwise in-flight requests finish) */
  close(force?: boolean): Promise<void>;
}

/** Seconds a connection may stay silent both ways (Bun allows at most 255). */
export const IDLE_TIMEOUT_S = 120;

/** Starts listening; nothing is printed and no signal handler is installed (stack.md §1.4). */
export async function startServer(app: H3, opts: { host: string; port: number; idleTimeoutS?: number; onError?: (e: unknown) => Response }): Promise<RunningServer> {
  if (typeof Bun !== "undefined") {
    const server = Bun.serve({
      // a connection that sends and reads nothing for this long is closed: a client that
      // never finishes its request, or never reads its answer, holds no socket and no
      // buffered answer for good; SSE streams send a keepalive every 15 s
      hostname: opts.host, port: opts.port, idleTimeout: opts.idleTimeoutS ?? IDLE_TIMEOUT_S,
      // the routes bound what they read (1 MiB of JSON, 64 MiB of artifact) and answer past
      // it with the error envelope; Bun's own limit (128 MiB) answered an empty 413 first
      maxRequestBodySize: Number.MAX_SAFE_INTEGER,
      fetch: (req) => app.fetch(req),
      // what escapes the app is answered by it (the error envelope), never with Bun's
      // development page, which shows the stack, source lines and working directory
      development: false,
      // which would also turn SO_REUSEPORT on: a second server on a port in use would share
      // it (each taking some of the connections) instead of failing with EADDRINUSE
      reusePort: false,
      ...(opts.onError ? { error: opts.onError } : {}),
    });
    // the bound address, as srvx reports it (`--host localhost` binds 127.0.0.1 here)
    const bound = (server as unknown as { address?: { address: string; port: number } }).address;
    const url = bound ? new URL(`http://${bound.address.includes(":") ? `[${bound.address}]` : bound.address}:${bound.port}`) : server.url;
    return { url: formatUrl(url), close: async (force = false) => { await server.stop(force); } };
  }
  const server = serve(app, {
    hostname: opts.host, port: opts.port, silent: true, gracefulShutdown: false,
  } as Parameters<typeof serve>[1]);
  await server.ready();
  return { url: formatUrl(new URL(server.url!)), close: (force = false) => server.close(force) };
}

/** `http://host:port` without a trailing slash; IPv6 hosts in brackets. */
function formatUrl(url: URL): string {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  return `http://${host.includes(":") ? `[${host}]` : host}:${url.port}`;
}
