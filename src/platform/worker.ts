/**
 * Worker threads on our own modules. Run from source, a module is found next to this
 * file; in the compiled binary every worker module is an extra entry point of the build
 * (build.ts), found in the binary's virtual root by its path under src/.
 */

/** Starts a worker on the module at `fromSrc` (a path under src/, e.g. "store/sqlite/x.ts"); it does not keep the process alive. */
export function startModuleWorker(fromSrc: string): Worker {
  const compiled = import.meta.url.includes("$bunfs") || import.meta.url.includes("~BUN");
  const worker = new Worker(compiled ? `./${fromSrc}` : new URL(`../${fromSrc}`, import.meta.url).href);
  (worker as unknown as { unref(): void }).unref();
  return worker;
}
