/** CLI input: `--data JSON|@file|@-|-` (the last two: stdin) and small flag helpers. */
import { CardsError } from "../domain/errors.ts";
import { parseUntrustedJson } from "../domain/json.ts";

/** node:fs costs ~1.3 ms to load: only calls that read a file pay for it. */
const fs = (): typeof import("node:fs") => process.getBuiltinModule("node:fs") as typeof import("node:fs");

/** Reads the raw JSON text named by --data; undefined when the flag is absent. */
export function readData(data: string | undefined): string | undefined {
  if (data === undefined) return undefined;
  if (data === "@-" || data === "-") return fs().readFileSync(0, "utf8");
  if (data.startsWith("@")) {
    try {
      return fs().readFileSync(data.slice(1), "utf8");
    } catch (e) {
      throw new CardsError("usage", `cannot read ${data.slice(1)}: ${(e as Error).message}`, { field: "--data" });
    }
  }
  return data;
}

/** Parses --data as a JSON object (flags are then merged over it). */
export function readDataObject(data: string | undefined): Record<string, unknown> {
  const text = readData(data);
  if (text === undefined || text.trim() === "") return {};
  const v = parseUntrustedJson(text, "--data", { field: "--data" });
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new CardsError("bad_request", "--data must be a JSON object", { field: "--data" });
  return v as Record<string, unknown>;
}

/** A create or patch with no flag and no --data: say how to send input (stdin needs `--data @-`). */
export function assertInput(body: Record<string, unknown>, data: string | undefined, cmd: string): void {
  if (data !== undefined || Object.keys(body).length > 0) return;
  throw new CardsError("usage", `${cmd}: nothing to send: give flags (cards ${cmd} --help) or --data JSON|@file|@-`, {
    hint: "JSON piped on stdin is read only with --data @- (or --data -)",
  });
}

/** Parses a flag value as JSON (for --fields, --filter). */
export function jsonFlag(name: string, raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  return parseUntrustedJson(raw, `--${name}`, { field: `--${name}`, hint: `--${name} takes JSON, quoted for the shell: --${name} '{"key": "value"}'` });
}

/** Parses a positional argument as JSON; errors name it as the help does (ENTRY). */
export function jsonArg(name: string, raw: string): unknown {
  return parseUntrustedJson(raw, name.toUpperCase(), { field: name });
}

export function intFlag(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^-?\d+$/.test(raw)) throw new CardsError("usage", `--${name} must be an integer`, { field: `--${name}`, value: raw });
  return Number(raw);
}

export function listFlag(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : raw.split(",").map((s) => s.trim()).filter(Boolean);
}

/** Reads a file (or stdin for `-`) as bytes. */
export function readBytes(file: string): Uint8Array {
  try {
    return new Uint8Array(fs().readFileSync(file === "-" ? 0 : file));
  } catch (e) {
    throw new CardsError("usage", `cannot read ${file}: ${(e as Error).message}`, { field: "file" });
  }
}
