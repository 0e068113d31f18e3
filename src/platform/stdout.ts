/**
 * Standard output for the CLI's answers, through Bun's own writer: it waits for a slow or
 * non-blocking pipe and reports a write that fails (a full disk, a closed pipe), which
 * console.log drops; node:fs would cost ~2 ms of loading on every call.
 */
export async function writeStdout(data: string | Uint8Array): Promise<void> {
  await Bun.write(Bun.stdout, data);
}
