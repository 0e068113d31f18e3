/**
 * `cards serve` lifecycle: open the workspace, listen, log `listening on URL` to stderr,
 * and shut down cleanly on SIGINT/SIGTERM (stop accepting, close, checkpoint, exit 0).
 */
import { createConsola } from "consola";
import { openService } from "../platform/open.ts";
import { startServer } from "../platform/serve.ts";
import { TemporalMonitor, watchDefinitions } from "../service/index.ts";
import { createHttpApp } from "./app.ts";
import { closeAllStreams } from "./sse.ts";

export interface ServeOptions {
  dir?: string;
  cwd: string;
  env: Record<string, string | undefined>;
  host: string;
  port: number;
  watch: boolean;
}

export async function startService(o: ServeOptions): Promise<void> {
  // NOTE stack.md §9: consola writes info to stdout unless told otherwise.
  const log = createConsola({ stdout: process.stderr, stderr: process.stderr });
  const svc = await openService({ dir: o.dir, cwd: o.cwd, env: o.env, mode: "serve" });
  const app = createHttpApp(svc, { log: (m) => log.error(m) });
  const monitor = new TemporalMonitor(svc);
  monitor.start();
  const unwatch = o.watch ? watchDefinitions(svc, (m) => log.info(m)) : () => {};
  const server = await startServer(app, { host: o.host, port: o.port });
  if (!/^(127\.|localhost|\[::1\])/.test(new URL(server.url).hostname) && !server.url.includes("[::1]")) {
    log.warn(`listening on a non-loopback address: the API has no authentication; anyone who can reach ${server.url} can change cards`);
  }
  console.error(`listening on ${server.url}`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    monitor.stop();
    unwatch();
    closeAllStreams();
    await server.close().catch(() => {});
    svc.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
