/**
 * Child processes for extensions (node:child_process, which Bun and Deno both provide).
 * Supervised children (hooks, services) get their own process group so that terminate()
 * reaches everything they started; a foreground child (run extensions) shares the
 * terminal and this process's stdio. Argument arrays only: no shell is ever involved.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { constants } from "node:os";

/** How a child ended. */
export interface ExitStatus {
  /** exit code; null when killed by a signal or never started */
  code: number | null;
  /** the signal that ended it, e.g. "SIGTERM" */
  signal: string | null;
  /** set when the process could not be started, e.g. "ENOENT: no such file or directory ..." */
  error?: string;
  /** the errno name of a start failure, e.g. "ENOENT" */
  errorCode?: string;
  /** what a start failure is about: the working directory, or the executable (`run`) */
  errorIn?: "cwd" | "run";
}

/** What to do with the child's stdout and stderr. */
export type OutputMode =
  /** stdout discarded, stderr kept as a short tail for error messages */
  | "tail"
  /** both streams read line by line (and the stderr tail kept) */
  | ((stream: "stdout" | "stderr", line: string) => void);

export interface SpawnOptions {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** written to stdin, which is then closed; without it stdin is /dev/null */
  input?: string;
  output: OutputMode;
}

export interface SupervisedChild {
  /** undefined when the process could not be started */
  readonly pid: number | undefined;
  /** settles once the process has exited or failed to start; never rejects */
  readonly exited: Promise<ExitStatus>;
  /** true until `exited` settles */
  readonly running: boolean;
  /**
   * SIGTERM to the process group, then SIGKILL when it is still alive after `graceMs`.
   * Resolves with the exit status and whether SIGKILL was needed.
   */
  terminate(graceMs: number): Promise<{ status: ExitStatus; killed: boolean }>;
  /** the last bytes the child wrote to stderr (at most 2 KiB), trimmed */
  stderrTail(): string;
}

const TAIL_BYTES = 2048;
const MAX_LINE = 4096;

/** Starts a supervised child in its own process group. Never throws: start failures settle `exited`. */
export function spawnSupervised(o: SpawnOptions): SupervisedChild {
  const [cmd, ...args] = o.argv;
  let tail = "";
  let running = true;
  let child: ChildProcess | undefined;
  let settle!: (s: ExitStatus) => void;
  const exited = new Promise<ExitStatus>((resolve) => {
    settle = (s) => {
      if (!running) return;
      running = false;
      resolve(s);
    };
  });
  const keepTail = (chunk: string) => {
    tail = (tail + chunk).slice(-TAIL_BYTES);
  };
  const noCwd = cwdFailure(o.cwd);
  if (noCwd) settle(noCwd);
  else try {
    child = spawn(cmd ?? "", args, {
      cwd: o.cwd,
      env: o.env,
      detached: process.platform !== "win32",
      windowsHide: true,
      stdio: [o.input === undefined ? "ignore" : "pipe", typeof o.output === "function" ? "pipe" : "ignore", "pipe"],
    });
  } catch (e) {
    settle(startFailure(e));
  }
  if (child) {
    child.once("error", (e) => settle(startFailure(e)));
    child.once("exit", (code, signal) => {
      settle({ code, signal });
      reapGroup(child!.pid);
    });
    if (o.input !== undefined && child.stdin) {
      child.stdin.on("error", () => { /* the child exited without reading stdin (EPIPE) */ });
      child.stdin.end(o.input);
    }
    const onLine = typeof o.output === "function" ? o.output : undefined;
    if (child.stdout && onLine) readLines(child.stdout, (l) => onLine("stdout", l));
    if (child.stderr) {
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", keepTail);
      if (onLine) readLines(child.stderr, (l) => onLine("stderr", l));
    }
  }
  const pid = child?.pid;

  const terminate = async (graceMs: number): Promise<{ status: ExitStatus; killed: boolean }> => {
    if (!running) return { status: await exited, killed: false };
    signalGroup(pid, "SIGTERM");
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      signalGroup(pid, "SIGKILL");
    }, graceMs);
    const status = await exited;
    clearTimeout(timer);
    return { status, killed };
  };

  return {
    pid,
    exited,
    get running() { return running; },
    terminate,
    stderrTail: () => tail.trim(),
  };
}

/**
 * Runs a child in the foreground: stdio inherited, same process group (so a terminal's
 * Ctrl-C reaches it directly), SIGTERM and SIGHUP sent to this process forwarded to it,
 * SIGINT left to the child while it runs. Resolves with its exit status.
 */
export function runForeground(o: Omit<SpawnOptions, "input" | "output">): Promise<ExitStatus> {
  const [cmd, ...args] = o.argv;
  return new Promise<ExitStatus>((resolve) => {
    let child: ChildProcess;
    const noCwd = cwdFailure(o.cwd);
    if (noCwd) return resolve(noCwd);
    try {
      child = spawn(cmd ?? "", args, { cwd: o.cwd, env: o.env, stdio: "inherit", windowsHide: true });
    } catch (e) {
      resolve(startFailure(e));
      return;
    }
    const forward = (sig: NodeJS.Signals) => () => { try { child.kill(sig); } catch { /* already gone */ } };
    const handlers: Array<[NodeJS.Signals, () => void]> = [
      ["SIGINT", () => { /* the terminal sent it to the child too; wait for the child */ }],
      ["SIGTERM", forward("SIGTERM")],
      ["SIGHUP", forward("SIGHUP")],
    ];
    for (const [sig, fn] of handlers) process.on(sig, fn);
    let done = false;
    const finish = (s: ExitStatus) => {
      if (done) return;
      done = true;
      for (const [sig, fn] of handlers) process.off(sig, fn);
      resolve(s);
    };
    child.once("error", (e) => finish(startFailure(e)));
    child.once("exit", (code, signal) => finish({ code, signal }));
  });
}

/** The shell convention for an exit status: the code, 128 + signal number, or 127/126 for start failures. */
export function exitCodeOf(s: ExitStatus): number {
  if (s.code !== null) return s.code;
  if (s.signal) return 128 + ((constants.signals as Record<string, number>)[s.signal] ?? 0);
  if (s.errorCode === "ENOENT") return 127;
  return s.error ? 126 : 1;
}

/** How long what a supervised child left in its process group gets between SIGTERM and SIGKILL. */
export const LEFTOVER_GRACE_MS = 5_000;

/**
 * After a supervised child exited: terminates whatever it left running in its process
 * group (background jobs of a shell script), SIGKILL after LEFTOVER_GRACE_MS. The group's
 * id stays taken while any member lives, so the signal cannot reach another process.
 */
function reapGroup(pid: number | undefined): void {
  if (pid === undefined || process.platform === "win32") return;
  if (!signalOnlyGroup(pid, "SIGTERM")) return; // the group is empty
  const timer = setTimeout(() => { signalOnlyGroup(pid, "SIGKILL"); }, LEFTOVER_GRACE_MS);
  (timer as { unref?: () => void }).unref?.();
}

function signalOnlyGroup(pgid: number, sig: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Sends a signal to a supervised child's process group (the child alone on Windows). */
function signalGroup(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(process.platform === "win32" ? pid : -pid, sig);
  } catch {
    try { process.kill(pid, sig); } catch { /* already gone */ }
  }
}

function startFailure(e: unknown): ExitStatus {
  const err = e as NodeJS.ErrnoException;
  return { code: null, signal: null, error: String(err?.message ?? e), errorCode: err?.code, errorIn: "run" };
}

/**
 * A working directory that is missing or not a directory, as a start failure about `cwd`
 * (spawn itself would answer ENOENT naming the executable, which exists).
 */
function cwdFailure(cwd: string): ExitStatus | undefined {
  try {
    if (statSync(cwd).isDirectory()) return undefined;
    return { code: null, signal: null, error: `the working directory ${cwd} is not a directory`, errorCode: "ENOTDIR", errorIn: "cwd" };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "ENOENT";
    return { code: null, signal: null, error: `the working directory ${cwd} ${code === "ENOENT" ? "does not exist" : `cannot be used (${code})`}`, errorCode: code, errorIn: "cwd" };
  }
}

/**
 * Lines read per second from one child stream before reading pauses until the second is
 * over. A child printing without pause (`yes`) would otherwise keep this process's one
 * thread reading and splitting; paused, it waits on its full pipe instead.
 */
export const FLOOD_LINES_PER_SECOND = 20_000;

function readLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buf = "";
  let windowStart = 0;
  let count = 0;
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    const now = performance.now(); // not the wall clock: a step back would hold the pipe paused that long
    if (now - windowStart >= 1000) {
      windowStart = now;
      count = 0;
    }
    const text = buf + chunk;
    let start = 0;
    let nl: number;
    while ((nl = text.indexOf("\n", start)) >= 0) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      onLine(text.slice(start, Math.min(end, start + MAX_LINE)));
      start = nl + 1;
      count++;
    }
    buf = start === 0 ? text : text.slice(start);
    if (buf.length > MAX_LINE) {
      onLine(buf.slice(0, MAX_LINE));
      buf = "";
      count++;
    }
    if (count > FLOOD_LINES_PER_SECOND) {
      stream.pause();
      setTimeout(() => stream.resume(), Math.max(1, 1000 - (performance.now() - windowStart)));
    }
  });
  stream.on("end", () => { if (buf) onLine(buf.slice(0, MAX_LINE)); });
}
