/**
 * Worker modules bundled whole, by their path under src/ (platform/worker.ts starts them
 * from this text). THIS CHECKED-IN COPY IS THE SOURCE-RUN FALLBACK: it is empty, so a run
 * from source starts each worker from its module file. build.ts bundles every worker
 * module on its own and hands the real module to the compiler in its place.
 */
export const WORKER_SOURCES: Record<string, string> = {};
