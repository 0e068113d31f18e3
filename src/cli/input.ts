/** CLI input: `--data JSON|@file|@-|-` (the last two: stdin) and small flag helpers. */
import { CardsError } from "../domain/errors.ts";
import { parseUntrustedJson } from "../domain/json.ts";
import { MAX_BODY_BYTES } from "../api/types.ts";
import { MAX_ARTIFACT_BYTES } from "../domain/limits.ts";
import { waitAMoment } from "./write-all.ts";

/** node:fs costs ~1.3 ms to load: only calls that read a file pay for it. */
const fs = (): typeof import("node:fs") => process.getBuiltinModule("node:fs") as typeof import("node:fs");


/** Reads the raw JSON text named by --data; undefined when the flag is absent. */
export function readData(data: string | undefined): string | undefined {
  if (data === undefined) return undefined;
  if (data === "@-" || data === "-") return utf8(readBounded("-", MAX_BODY_BYTES, "--data"), "stdin");
  if (data.startsWith("@")) return utf8(readBounded(data.slice(1), MAX_BODY_BYTES, "--data"), data.slice(1));
  return data;
}

/**
 * A file's bytes (`-`: stdin), refused as `payload_too_large` once past `limit`: a file by
 * its size before reading, a pipe or stdin as soon as it has sent more (`yes | cards ...`
 * and `</dev/zero` were read to the end of memory, a 200 MB file whole before the check).
 */
function readBounded(file: string, limit: number, field: string): Uint8Array {
  const { openSync, fstatSync, readSync, closeSync } = fs();
  const stdin = file === "-";
  const tooLarge = (): CardsError => new CardsError("payload_too_large", `${stdin ? "stdin" : file} holds more than ${limit} bytes, the most one ${field === "file" ? "upload" : "request"} takes`, {
    field, hint: field === "file" ? "see docs/limits.md" : "see docs/limits.md; keep large content in artifacts (cards cards artifacts put)",
  });
  let fd = 0;
  try {
    if (!stdin) fd = openSync(file, "r");
    const st = fstatSync(fd);
    if (st.isFile() && st.size > limit) throw tooLarge();
    // one buffer, grown by doubling up to limit + 1 (a short read keeps no slack of its own)
    let buf = new Uint8Array(st.isFile() ? st.size + 1 : 64 * 1024);
    let total = 0;
    for (;;) {
      if (total === buf.length) {
        if (buf.length > limit) throw tooLarge();
        const grown = new Uint8Array(Math.min(buf.length * 2, limit + 1));
        grown.set(buf);
        buf = grown;
      }
      let n: number;
      try {
        n = readSync(fd, buf, total, buf.length - total, null);
      } catch (e) {
        // stdin left non-blocking by whoever shares it: wait for more, without spinning
        if ((e as { code?: string }).code === "EAGAIN") { waitAMoment(); continue; }
        throw e;
      }
      if (n === 0) break;
      total += n;
      if (total > limit) throw tooLarge();
    }
    return buf.subarray(0, total);
  } catch (e) {
    if (e instanceof CardsError) throw e;
    throw new CardsError("usage", `cannot read ${file}: ${(e as Error).message}`, { field });
  } finally {
    if (!stdin && fd !== 0) closeSync(fd);
  }
}

/**
 * Decodes --data bytes as UTF-8, refusing what is not: a lossy decode stored U+FFFD in
 * place of the bytes, where a server refuses the same body (400, http/body.ts).
 */
function utf8(bytes: Uint8Array, from: string): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new CardsError("bad_request", `--data (${from}) is not valid UTF-8`, { field: "--data", hint: "JSON text is UTF-8: convert the file (iconv -t UTF-8) or escape the characters as \\uXXXX" });
  }
}

/**
 * Sets body.fields from --fields, merged key by key over the fields --data gave: the
 * flag names the keys to change, it does not drop the others.
 */
export function mergeFieldsFlag(body: Record<string, unknown>, raw: string | undefined): void {
  if (raw === undefined) return;
  const flag = jsonFlag("fields", raw);
  const given = body.fields;
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  body.fields = isObject(given) && isObject(flag) ? { ...given, ...flag } : flag;
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

/**
 * `--tags`: comma-separated, or a JSON array of strings (starting `["`), for tags holding a
 * comma (tag_policy open allows them; splitting one on its comma made two tags).
 */
export function tagsFlag(raw: string | undefined): string[] | undefined {
  // `[wip]` is a tag; `["a,b"]` is a JSON list
  if (raw === undefined || !/^\s*\[\s*("|\])/.test(raw)) return listFlag(raw);
  let parsed: unknown;
  try { parsed = JSON.parse(raw); } catch { parsed = undefined; }
  if (!Array.isArray(parsed) || !parsed.every((t) => typeof t === "string")) {
    throw new CardsError("usage", "--tags starting with [\" must be a JSON array of strings", { field: "--tags", value: raw, hint: `--tags a,b or --tags '["a,b","c"]'` });
  }
  return parsed;
}

/** Reads a file (or stdin for `-`) as bytes, at most `limit` of them (payload_too_large past it). */
export function readBytes(file: string, limit = MAX_ARTIFACT_BYTES): Uint8Array {
  return readBounded(file, limit, "file");
}
