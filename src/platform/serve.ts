/** Serving an h3 app (srvx picks Bun.serve on Bun, Deno.serve on Deno). */
import { serve, type H3 } from "h3";

export interface RunningServer {
  url: string;
  /** stops accepting; `force` also cuts connections still open (otherwise in-flight requests finish) */
  close(force?: boolean): Promise<void>;
}

/** Starts listening; srvx stays silent and installs no signal handlers (stack.md §1.4). */
export async function startServer(app: H3, opts: { host: string; port: number }): Promise<RunningServer> {
  const server = serve(app, {
    hostname: opts.host, port: opts.port, silent: true, gracefulShutdown: false,
    bun: { idleTimeout: 0 },
  } as Parameters<typeof serve>[1]);
  await server.ready();
  const url = new URL(server.url!);
  return {
    url: `http://${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${url.port}`,
    close: (force = false) => server.close(force),
  };
}
