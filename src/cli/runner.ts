/**
 * Our own citty runner (stack.md §2): resolves the command path, rejects unknown flags,
 * prints help without colour, prints the result as one JSON line on stdout, and on
 * failure the error envelope on stderr with the exit code of docs/cli.md.
 * NOTE perf-baselines.md §1: never touch process.stdout/stderr here (+7 ms); console only.
 */
import type { ArgsDef, CommandDef } from "citty";
import { parseCliArgs } from "./args.ts";
import { CardsError, EXIT_CODE, fromEnvironment, isCardsError, toEnvelope } from "../domain/errors.ts";
import type { CliGlobals } from "./client.ts";
import { printOut } from "./write-all.ts";

const GLOBAL_FLAGS: Record<string, keyof Omit<CliGlobals, "env" | "cwd">> = {
  "--dir": "dir", "--url": "url", "--actor": "actor", "--idempotency-key": "idempotencyKey", "--timeout": "timeout",
};

/** What a command's run() may return besides a JSON value to print. */
export interface CliOutcome { text?: string; exitCode?: number; }

export async function runCli(root: CommandDef, argv: string[], version: string): Promise<number> {
  const env = process.env as Record<string, string | undefined>;
  try {
    if (argv.some((a) => a.includes("\uFFFD")) || env.CARDS_ACTOR?.includes("\uFFFD")) assertUtf8Input(env);
    const { globals, rest } = extractGlobals(argv, env);
    if (rest[0] === "--version" || rest[0] === "-v") {
      console.log(version);
      return 0;
    }
    const { cmd, path, args } = await resolve(root, rest);
    // on `events`, --actor is the feed's filter (GET /events?actor=), as its help says: a
    // read acts as no one, and taking it as the caller silently listed every actor's events
    if (path.length === 2 && path[1] === "events" && globals.actor !== undefined) {
      args.push("--actor", globals.actor);
      delete globals.actor;
    }
    // `cards` alone prints help; a group without its command (`cards cards`) is a usage
    // error listing the commands, so stdout never carries anything but JSON for a script
    // words after `--` belong to the command (`ext run ID -- --help` passes --help on)
    const own = args.includes("--") ? args.slice(0, args.indexOf("--")) : args;
    if (own.includes("--help") || own.includes("-h") || (!cmd.run && args.length === 0 && path.length === 1)) {
      console.log(await helpText(cmd, path));
      return 0;
    }
    if (!cmd.run) throw await unknownCommand(cmd, path, args[0]);
    const def = ((await resolveValue(cmd.args)) ?? {}) as ArgsDef;
    rejectUnknownFlags(args, def, path);
    const parsed = parseCliArgs(args, def, path.join(" "));
    const result = await cmd.run({ rawArgs: args, args: parsed as never, cmd, data: globals });
    return await print(result);
  } catch (caught) {
    const e = fromEnvironment(caught);
    const env = toEnvelope(e);
    if (!isCardsError(e)) console.error(String((e as Error)?.stack ?? e));
    console.error(JSON.stringify(env));
    // a code no table names (never from our own errors) is still a failure
    return isCardsError(e) ? EXIT_CODE[e.code] ?? 1 : 1;
  }
}

/**
 * Arguments and CARDS_ACTOR arrive decoded, each byte that is not UTF-8 as U+FFFD: a title
 * typed in a Latin-1 terminal would be stored as "caf\uFFFD". Where the raw bytes can be
 * read (Linux), such input is refused, as a body or file that is not UTF-8 is; a U+FFFD
 * the caller really wrote passes.
 */
function assertUtf8Input(env: Record<string, string | undefined>): void {
  const fs = process.getBuiltinModule("node:fs") as typeof import("node:fs");
  const { isUtf8 } = process.getBuiltinModule("node:buffer") as typeof import("node:buffer");
  let cmdline: Buffer, environ: Buffer;
  try {
    cmdline = fs.readFileSync("/proc/self/cmdline");
    environ = fs.readFileSync("/proc/self/environ");
  } catch {
    return; // no /proc: taken as decoded
  }
  if (!isUtf8(cmdline)) {
    throw new CardsError("usage", "an argument is not UTF-8 text (bytes of another encoding, such as Latin-1)", {
      hint: "pass text as UTF-8: set the terminal or script to a UTF-8 locale, or send the value in a UTF-8 file with --data @file",
    });
  }
  if (env.CARDS_ACTOR?.includes("\uFFFD")) {
    const entry = environ.toString("latin1").split("\0").findIndex((e) => e.startsWith("CARDS_ACTOR="));
    const raw = entry >= 0 ? environ.subarray(...spanOf(environ, entry)) : undefined;
    if (raw && !isUtf8(raw)) throw new CardsError("usage", "CARDS_ACTOR is not UTF-8 text (bytes of another encoding, such as Latin-1)", { field: "CARDS_ACTOR", hint: "set it as UTF-8, or pass --actor" });
  }
}

/** Start and end of the `n`th NUL-separated entry of `buf`. */
function spanOf(buf: Buffer, n: number): [number, number] {
  let start = 0;
  for (let i = 0; i < n; i++) start = buf.indexOf(0, start) + 1;
  const end = buf.indexOf(0, start);
  return [start, end < 0 ? buf.length : end];
}

async function print(result: unknown): Promise<number> {
  if (result === undefined) return 0;
  if (result && typeof result === "object" && "__cli" in result) {
    const o = (result as { __cli: CliOutcome }).__cli;
    if (o.text !== undefined) await printOut(`${o.text}\n`);
    return o.exitCode ?? 0;
  }
  await printOut(`${JSON.stringify(result)}\n`);
  return 0;
}

/** Wraps a non-JSON outcome for the runner. */
export const outcome = (o: CliOutcome): { __cli: CliOutcome } => ({ __cli: o });

function extractGlobals(argv: string[], env: Record<string, string | undefined>): { globals: CliGlobals; rest: string[] } {
  const globals: CliGlobals = { env, cwd: process.cwd() };
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") { rest.push(...argv.slice(i)); break; }
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    const key = Object.hasOwn(GLOBAL_FLAGS, name) ? GLOBAL_FLAGS[name] : undefined; // a word `constructor` is no flag
    if (!key) { rest.push(a); continue; }
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined || value === "") throw new CardsError("usage", `${name} needs a value`, { field: name });
    globals[key] = value;
  }
  return { globals, rest };
}

async function resolve(root: CommandDef, argv: string[]): Promise<{ cmd: CommandDef; path: string[]; args: string[] }> {
  let cmd = root;
  const path = ["cards"];
  let i = 0;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    if (word.startsWith("-")) break;
    const subs = await resolveValue(cmd.subCommands);
    if (!subs) break;
    const next = Object.hasOwn(subs, word) ? subs[word] : undefined;
    if (!next) throw await unknownCommand(cmd, path, word);
    cmd = (await resolveValue(next)) as CommandDef;
    path.push(word);
  }
  return { cmd, path, args: argv.slice(i) };
}

async function unknownCommand(cmd: CommandDef, path: string[], word: string | undefined): Promise<CardsError> {
  const subs = Object.keys((await resolveValue(cmd.subCommands)) ?? {});
  return new CardsError("usage", word ? `unknown command ${JSON.stringify(word)} for ${path.join(" ")}` : `${path.join(" ")} needs a command`, {
    value: word, valid_options: subs, hint: `see \`${path.join(" ")} --help\``,
  });
}

function rejectUnknownFlags(args: string[], def: ArgsDef, path: string[]): void {
  if (!hasFlag(args)) return; // the common agent call: positionals only
  const known = new Set<string>();
  const valueFlags = new Set<string>();
  for (const [name, d] of Object.entries(def)) {
    if (d.type === "positional") continue;
    for (const n of [name, ...toArray((d as { alias?: string | string[] }).alias)]) {
      known.add(n);
      known.add(kebab(n));
      if (d.type === "boolean") known.add(`no-${kebab(n)}`);
      else { valueFlags.add(n); valueFlags.add(kebab(n)); }
    }
  }
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    if (!isFlag(a)) continue;
    const name = a.replace(/^--?/, "").split("=")[0]!;
    if (known.has(name)) {
      // the next word is this flag's value, whatever it looks like (`--sort -title`)
      if (!a.includes("=") && valueFlags.has(name)) i++;
      continue;
    }
    throw new CardsError("usage", `unknown flag ${a.split("=")[0]} for ${path.join(" ")}`, {
      value: a, valid_options: [...new Set(Object.keys(def).filter((k) => def[k]!.type !== "positional").map((k) => `--${kebab(k)}`))],
      // a command that passes words on (`ext run ID -- ARGS`): the flag was meant for it
      hint: Object.values(def).some((d) => (d as { variadic?: boolean }).variadic)
        ? `to pass ${a.split("=")[0]} on, put -- before it: \`${path.join(" ")} ${args.filter((x) => !isFlag(x))[0] ?? "ID"} -- ${a}\``
        : `see \`${path.join(" ")} --help\``,
    });
  }
}

async function helpText(cmd: CommandDef, path: string[]): Promise<string> {
  const parent = path.length > 1 ? ({ meta: { name: path.slice(0, -1).join(" ") } } as CommandDef) : undefined;
  const { renderUsage } = await import("citty");
  // NOTE stack.md §2 pitfall 1: citty colours help even when piped; strip ANSI always.
  // citty also pads its table to a wide column: in 80 columns every row wrapped into a blank line
  let text = (await renderUsage(cmd, parent)).replace(/\u001b\[[0-9;]*m/g, "").replace(/[ \t]+$/gm, "");
  // a group that runs on its own too (`cards workspace`): citty shows only the subcommands' usage
  if (cmd.run && cmd.subCommands) text = text.replace(/^USAGE (.*)$/m, (_m, u: string) => `USAGE ${path.join(" ")} | ${u.trim()}`);
  return `${text.trimEnd()}\n\n${globalHelp(path.join(" "))}`;
}

/**
 * Commands that work on the workspace files where they run, and what they do with
 * --url / CARDS_URL (docs/cli.md): the help of these does not offer the server's flags.
 */
export const FILES_HERE: Record<string, "ignore" | "refuse"> = {
  "cards init": "ignore", "cards check": "ignore", "cards serve": "ignore", "cards ext run": "ignore", "cards ext list": "ignore",
  "cards mcp": "refuse", "cards dump": "refuse", "cards restore": "refuse", "cards backup": "refuse", "cards artifacts gc": "refuse",
  "cards ext start": "refuse", "cards ext stop": "refuse", "cards ext restart": "refuse",
};

/** What a command reads from its environment beyond the global flags' variables (docs/limits.md, docs/cli.md). */
const ENVIRONMENT: Record<string, string[]> = {
  "cards serve": [
    "  CARDS_ACTOR              the actor of requests that name none (no X-Service-Actor)",
    "  CARDS_PUBLIC_URL         as --public-url",
    "  CARDS_ACCESS_LOG=1       as --access-log",
    "  CARDS_MAX_STREAMS        open event streams at most (default 1000); the next is 503",
    "  CARDS_IDLE_TIMEOUT_S     seconds an idle connection stays open (default 120, 1-255)",
    "  CARDS_DEBUG=1            an internal error's log line carries its stack",
  ],
};

/** The flags every command takes (extractGlobals), shown under each command's help. */
function globalHelp(path: string): string {
  const here = FILES_HERE[path];
  const lines = [
    "GLOBAL OPTIONS (any command, anywhere before --)",
    "",
    "  --dir=<dir>              workspace root (default: found upward from the current directory)",
    ...(here ? [] : ["  --url=<url>              use a running server (same as CARDS_URL; --dir wins over CARDS_URL)"]),
    "  --actor=<actor>          act as this user (X-Service-Actor; else CARDS_ACTOR, settings.default_user)",
    ...(here ? [] : [
      "  --idempotency-key=<key>  make a write safe to retry (Idempotency-Key; a remote write gets one of its own,",
      "                           named in the error when its answer was lost)",
      "  --timeout=<seconds>      a remote call's limit (same as CARDS_TIMEOUT; default 60, 600 for artifacts)",
    ]),
  ];
  if (here) lines.push("", `This command works on the workspace files here: it ${here === "ignore" ? "ignores" : "refuses"} CARDS_URL / --url.`);
  if (ENVIRONMENT[path]) lines.push("", "ENVIRONMENT", "", ...ENVIRONMENT[path]!);
  return lines.join("\n");
}

async function resolveValue<T>(v: T | Promise<T> | (() => T | Promise<T>) | undefined): Promise<T | undefined> {
  return typeof v === "function" ? await (v as () => T | Promise<T>)() : await v;
}

const toArray = (x: string | string[] | undefined): string[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
const kebab = (s: string): string => (/[A-Z_]/.test(s) ? s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`).replace(/_/g, "-") : s);
function hasFlag(args: string[]): boolean {
  for (let i = 0; i < args.length; i++) if (isFlag(args[i]!)) return true;
  return false;
}

/** `-x`, `--x` and `--x=v`, not `-`, `-5` or a positional */
const isFlag = (a: string): boolean => a.length > 1 && a.charCodeAt(0) === 45 && !(a.charCodeAt(1) >= 48 && a.charCodeAt(1) <= 57);
