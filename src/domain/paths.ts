/**
 * POSIX path joining for the CLI cold path. Loading node:path costs about 0.5 ms in the
 * compiled binary (docs/decisions.md), a tenth of a whole `cards cards get`, and the
 * cold path only ever joins, resolves and takes the parent of plain POSIX paths.
 * Same results as node:path's posix functions (tests/unit/paths.test.ts checks them).
 */

/** Collapses `//`, `.` and `..`; keeps a leading `/`; "" becomes ".". */
export function normalizePath(p: string): string {
  const absolute = p.startsWith("/");
  const out: string[] = [];
  for (const part of p.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(part);
  }
  const body = out.join("/");
  return absolute ? `/${body}` : body || ".";
}

/** node:path `join`: the non-empty parts joined with `/`, normalized. */
export function joinPath(...parts: string[]): string {
  let joined = "";
  for (const part of parts) if (part) joined = joined ? `${joined}/${part}` : part;
  return normalizePath(joined);
}

/** node:path `resolve(cwd, p)`: `p` when absolute, else `cwd/p`, normalized (`cwd` is absolute). */
export function resolvePath(cwd: string, p = ""): string {
  return normalizePath(p.startsWith("/") ? p : `${cwd}/${p}`);
}

/** node:path `dirname` of a normalized path: "/" for a top-level entry and for "/", "." for a bare name. */
export function parentPath(path: string): string {
  let p = path;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  const i = p.lastIndexOf("/");
  if (i < 0) return ".";
  return i === 0 ? "/" : p.slice(0, i);
}
