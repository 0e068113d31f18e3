/**
 * `cards artifacts get <uri> [--out F]`: downloads an artifact's bytes (GET /artifacts/{path}).
 * `cards artifacts gc [--dry-run]`: removes stored bytes nothing refers to (local).
 */
import { writeFileSync } from "node:fs";
import { defineCommand } from "../define.ts";
import { callRaw, envelopeError, serverUrl, type CliGlobals } from "../client.ts";
import { intFlag } from "../input.ts";
import { printOut } from "../write-all.ts";
import { CardsError, notFound } from "../../domain/errors.ts";

export default defineCommand({
  meta: { name: "artifacts", description: "Stored artifacts" },
  subCommands: {
    get: defineCommand({
      meta: { name: "get", description: "Write an artifact's bytes to stdout or --out (GET /artifacts/{path})" },
      args: {
        uri: { type: "positional", description: "the artifact uri (artifacts/sha256/...)", required: true },
        out: { type: "string", description: "write to this file instead of stdout" },
      },
      run: async ({ args, data }) => {
        // a query or fragment is not part of the artifact (an HTTP client drops it too)
        const path = args.uri.replace(/[?#].*$/s, "").replace(/^\/?(v1\/)?(artifacts\/)?/, "/artifacts/");
        // the server reads a `.` or `..` segment as part of the artifact path (not found);
        // an HTTP client would resolve it into another route, so it is answered here alike
        const rest = path.slice("/artifacts/".length);
        if (rest.split("/").some((s) => s === "." || s === "..")) {
          throw notFound("artifact", rest);
        }
        const res = await callRaw(data as CliGlobals, { method: "GET", path, wantBytes: true });
        if (res.status >= 400) throw envelopeError(JSON.parse(res.text));
        if (!res.bytes) throw new CardsError("internal", "no bytes in the artifact answer");
        if (args.out) {
          writeFileSync(args.out, res.bytes);
          return { path: args.out, size: res.bytes.byteLength, mime: res.headers?.["content-type"] };
        }
        await printOut(res.bytes);
        return undefined;
      },
    }),
    gc: defineCommand({
      meta: { name: "gc", description: "Remove stored artifact bytes that no card and no event refers to (uploads whose card write was refused); local, safe while a server runs" },
      args: {
        "dry-run": { type: "boolean", description: "count what would be removed; remove nothing" },
        "grace": { type: "string", description: "keep blobs stored within this many seconds (default 3600: an upload stores its bytes before its card write)" },
      },
      run: async ({ args, data }) => {
        const g = data as CliGlobals;
        if (serverUrl(g)) {
          throw new CardsError("usage", "artifacts gc works on the workspace files, not through a server", { hint: "run it with --dir on the machine that holds the workspace (a running server may stay up), without CARDS_URL / --url" });
        }
        const { openService } = await import("../../platform/open.ts");
        const { collectArtifacts } = await import("../../service/index.ts");
        const graceS = intFlag("grace", args.grace);
        if (graceS !== undefined && graceS < 0) throw new CardsError("usage", "--grace must be 0 or more seconds", { field: "--grace", value: args.grace });
        const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
        try {
          return await collectArtifacts(svc, { dryRun: args["dry-run"] === true, ...(graceS !== undefined ? { graceMs: graceS * 1000 } : {}) });
        } finally {
          svc.close();
        }
      },
    }),
  },
});
