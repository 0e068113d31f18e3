/** `cards artifacts get <uri> [--out F]`: downloads an artifact's bytes (GET /artifacts/{path}). */
import { writeFileSync } from "node:fs";
import { defineCommand } from "../define.ts";
import { callRaw, envelopeError, type CliGlobals } from "../client.ts";
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
        // NOTE: binary output needs process.stdout (its cost is paid only by this command)
        await new Promise<void>((resolve, reject) => process.stdout.write(res.bytes!, (e) => (e ? reject(e) : resolve())));
        return undefined;
      },
    }),
  },
});
