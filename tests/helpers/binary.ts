/** Running the compiled `dist/cards` binary: one-shot calls and a server on a free port. */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { BIN } from "./workspace.ts";

export interface RunResult { code: number; stdout: string; stderr: string; json: any; error: any }

/** Environment for child processes: no inherited actor or server URL. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CARDS_")) env[k] = v;
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export function assertBinary(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`bun run build\` first (npm test does)`);
}

export function run(args: string[], opts: { cwd?: string; env?: Record<string, string | undefined>; input?: string | Uint8Array } = {}): RunResult {
  const r = spawnSync(BIN, args, { cwd: opts.cwd, env: cleanEnv(opts.env), input: opts.input ?? "", encoding: "utf8", timeout: 30_000 });
  const parse = (s: string) => {
    const line = s.trim().split("\n").at(-1);
    try { return line ? JSON.parse(line) : undefined; } catch { return undefined; }
  };
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, json: parse(r.stdout), error: parse(r.stderr) };
}

export interface Server { url: string; proc: ChildProcess; stop(): Promise<void>; /** its stderr so far */ log(): string }

/** Starts `cards serve --port 0` and resolves once it logs `listening on URL`. */
export function serve(dir: string, env: Record<string, string | undefined> = {}, extraArgs: string[] = []): Promise<Server> {
  const proc = spawn(BIN, ["serve", "--dir", dir, "--port", "0", ...extraArgs], { env: cleanEnv(env), stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`serve did not start: ${err}`)); }, 15_000);
    proc.stderr!.setEncoding("utf8");
    proc.stderr!.on("data", (chunk: string) => {
      err += chunk;
      const m = err.match(/listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!, proc,
          log: () => err,
          stop: () => new Promise<void>((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done();
            proc.once("exit", () => done());
            proc.kill("SIGTERM");
          }),
        });
      }
    });
    proc.once("exit", (code) => { clearTimeout(timer); reject(new Error(`serve exited ${code}: ${err}`)); });
  });
}
