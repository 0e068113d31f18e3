/** Size limits more than one layer checks (docs/limits.md), in a module that loads nothing. */

/** Upload limit (DECISIONS size limits): 64 MiB, for HTTP, the service and the CLI's reading. */
export const MAX_ARTIFACT_BYTES = 64 * 1024 * 1024;
