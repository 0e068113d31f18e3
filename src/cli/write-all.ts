/**
 * Writing all of a buffer to a file descriptor, synchronously. `writeSync` may write
 * part of it (a pipe with little room) or fail with EAGAIN when the descriptor is
 * non-blocking: stdout shares its pipe with stderr under `2>&1`, and a reader on the other
 * end (or another process on the pipe) may have made it so. Both wait and go on, without
 * spinning; any other error is thrown.
 */
import { CardsError } from "../domain/errors.ts";
import { writeStdout } from "../platform/stdout.ts";

const pause = new Int32Array(new SharedArrayBuffer(4));
const encoder = new TextEncoder();
const fs = (): typeof import("node:fs") => process.getBuiltinModule("node:fs") as typeof import("node:fs");

export function writeAll(fd: number, data: string | Uint8Array): void {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  const { writeSync } = fs();
  for (let o = 0; o < bytes.length;) {
    try {
      o += writeSync(fd, bytes, o);
    } catch (e) {
      if ((e as { code?: string }).code !== "EAGAIN") throw e;
      waitAMoment();
    }
  }
}

/** Blocks this thread 5 ms without spinning: a descriptor that would block (EAGAIN) gets time to drain or fill. */
export function waitAMoment(): void {
  Atomics.wait(pause, 0, 0, 5);
}

/**
 * What a failed write to stdout means for the call: nothing when the reader is gone
 * (EPIPE: `cards ... | head -1` ends quietly, exit 0), else `unavailable` (exit 7), so a
 * script never goes on with an empty or cut answer after a full disk.
 */
export function stdoutFailure(e: unknown, done = "the command ran; its answer is lost"): CardsError | undefined {
  const code = (e as { code?: string })?.code;
  if (code === "EPIPE") return undefined;
  return new CardsError("unavailable", `cannot write stdout: ${(e as Error)?.message ?? String(e)}`, {
    hint: `check the disk has space and stdout is open (${done})`,
  });
}

/** Writes a command's answer to stdout; see stdoutFailure. */
export async function printOut(data: string | Uint8Array): Promise<void> {
  try {
    await writeStdout(data);
  } catch (e) {
    const failure = stdoutFailure(e);
    if (failure) throw failure;
  }
}
