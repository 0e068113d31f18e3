/** Embedded mode: open the workspace in this process and dispatch the route table. */
import { dispatch } from "../api/dispatch.ts";
import type { ApiRequest } from "../api/types.ts";
import { openService } from "../platform/open.ts";
import type { CliGlobals, RawResponse } from "./client.ts";

export async function localRequest(g: CliGlobals, req: ApiRequest): Promise<RawResponse> {
  const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
  try {
    const res = await dispatch(svc, req);
    if (res.raw) return { status: res.status, text: "", bytes: new Uint8Array(await new Response(res.raw).arrayBuffer()), headers: res.headers };
    const body = res.body;
    let text: string | undefined;
    return { status: res.status, get text() { return (text ??= JSON.stringify(body)); }, body, headers: res.headers };
  } finally {
    svc.close();
  }
}
