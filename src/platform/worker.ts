/**
 * Worker threads on our own modules. In the compiled binary each worker module is
 * bundled whole by build.ts (generated/worker-sources.gen.ts) and started from that
 * text: as an entry point of the main build it would share chunks with the CLI, and the
 * extra chunks cost every one-shot call ~0.4 ms of module loading. Run from source, a
 * module is found next to this file.
 */
import { WORKER_SOURCES } from "../generated/worker-sources.gen.ts";

/** Starts a worker on the module at `fromSrc` (a path under src/, e.g. "store/sqlite/x.ts"); it does not keep the process alive. */
export function startModuleWorker(fromSrc: string): Worker {
  const bundled = WORKER_SOURCES[fromSrc];
  const worker = new Worker(bundled !== undefined
    ? URL.createObjectURL(new Blob([bundled], { type: "application/javascript" }))
    : new URL(`../${fromSrc}`, import.meta.url).href);
  (worker as unknown as { unref(): void }).unref();
  return worker;
}
