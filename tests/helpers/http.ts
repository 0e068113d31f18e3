/** In-process HTTP: the real h3 app over a real workspace, called with fetch Requests. */
import { createHttpApp } from "../../src/http/app.ts";
import type { Service } from "../../src/service/index.ts";
import { makeWorkspace, openTestService } from "./workspace.ts";

export interface Res { status: number; body: any; headers: Headers; text: string }

export interface TestApi {
  svc: Service;
  dir: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  get(path: string, headers?: Record<string, string>): Promise<Res>;
  post(path: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  patch(path: string, body?: unknown, headers?: Record<string, string>): Promise<Res>;
  del(path: string, headers?: Record<string, string>): Promise<Res>;
  /** creates a task (title defaults) and returns the card */
  task(extra?: Record<string, unknown>): Promise<any>;
  close(): void;
}

export async function testApi(opts: { edit?: (files: Record<string, any>) => void; env?: Record<string, string | undefined> } = {}): Promise<TestApi> {
  const dir = makeWorkspace(opts.edit);
  const svc = await openTestService(dir, "serve", opts.env ?? {});
  const app = createHttpApp(svc);
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> => {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = typeof body === "string" ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] ??= "application/json";
    }
    const r = await app.fetch(new Request(`http://test${path.startsWith("/v1") || path.startsWith("/ui") ? path : `/v1${path}`}`, init));
    const text = await r.text();
    let parsed: unknown = undefined;
    try { parsed = text ? JSON.parse(text) : undefined; } catch { parsed = text; }
    return { status: r.status, body: parsed, headers: r.headers, text };
  };
  const api: TestApi = {
    svc, dir, call,
    get: (p, h) => call("GET", p, undefined, h),
    post: (p, b, h) => call("POST", p, b ?? {}, h),
    patch: (p, b, h) => call("PATCH", p, b, h),
    del: (p, h) => call("DELETE", p, undefined, h),
    task: async (extra = {}) => {
      const r = await call("POST", "/cards", { type_id: "task", title: "a task", ...extra });
      if (r.status !== 201) throw new Error(`task create failed: ${r.text}`);
      return r.body;
    },
    close: () => svc.close(),
  };
  return api;
}
