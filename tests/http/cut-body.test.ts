/**
 * A request body that stops arriving (the client closed the connection part-way) is the
 * client's doing: a 400 with the envelope, never logged as an internal error.
 */
import { expect, spyOn, test } from "bun:test";
import { createHttpApp } from "../../src/http/app.ts";
import { openTestService } from "../helpers/workspace.ts";

/** A body that sends `sent` and then fails as an aborted upload does. */
function cutBody(sent: string): ReadableStream<Uint8Array> {
  let step = 0;
  return new ReadableStream({
    pull(c) {
      if (step++ === 0) c.enqueue(new TextEncoder().encode(sent));
      else c.error(new DOMException("The operation was aborted.", "AbortError"));
    },
  });
}

test("a JSON body cut short is 400 bad_request, and no internal error is logged", async () => {
  const svc = await openTestService();
  const app = createHttpApp(svc);
  const logged = spyOn(console, "error");
  try {
    for (const headers of [{ "content-type": "application/json", "content-length": "100" }, { "content-type": "application/json" }]) {
      const res = await app.fetch(new Request("http://x/v1/cards", { method: "POST", headers: { ...headers, "x-service-actor": "ada" }, body: cutBody('{"type_id":"task",'), duplex: "half" } as RequestInit));
      const body = await res.json() as { error: string; message: string };
      expect([res.status, body.error]).toEqual([400, "bad_request"]);
      expect(body.message).toContain("the request body ended before it was complete");
    }
    expect(logged.mock.calls.filter((c) => String(c[0]).includes("internal error"))).toEqual([]);
    expect((await app.fetch(new Request("http://x/v1/cards"))).status).toBe(200);
  } finally {
    logged.mockRestore();
    svc.close();
  }
});

test("an artifact upload cut short is 400, stores nothing, and logs no internal error", async () => {
  const svc = await openTestService();
  const app = createHttpApp(svc);
  const logged = spyOn(console, "error");
  try {
    const made = await app.fetch(new Request("http://x/v1/cards", { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ type_id: "task", title: "with output" }) }));
    const card = await made.json() as { id: string; version: number };
    const res = await app.fetch(new Request(`http://x/v1/cards/${card.id}/artifacts/output`, { method: "POST", headers: { "content-type": "text/plain", "x-service-actor": "ada" }, body: cutBody("part of a log"), duplex: "half" } as RequestInit));
    const body = await res.json() as { error: string };
    expect([res.status, body.error]).toEqual([400, "bad_request"]);
    const after = await (await app.fetch(new Request(`http://x/v1/cards/${card.id}`))).json() as { version: number; fields: Record<string, unknown> };
    expect([after.version, after.fields.output]).toEqual([card.version, undefined]);
    expect(logged.mock.calls.filter((c) => String(c[0]).includes("internal error"))).toEqual([]);
  } finally {
    logged.mockRestore();
    svc.close();
  }
});
