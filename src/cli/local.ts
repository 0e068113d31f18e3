/** Embedded mode: open the workspace in this process and dispatch the route table. */
import { dispatch } from "../api/dispatch.ts";
import type { ApiRequest } from "../api/types.ts";
import { openService } from "../platform/open.ts";
import type { CliGlobals, RawResponse } from "./client.ts";

export async function localRequest(g: CliGlobals, req: ApiRequest): Promise<RawResponse> {
  const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
  try {
    const res = await dispatch(svc, req);
    return { status: res.status, text: JSON.stringify(res.body) };
  } finally {
    svc.close();
  }
}
