/** Schema upgrade (SPEC Versioning) and content-addressed artifacts over HTTP. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createHttpApp } from "../../src/http/app.ts";
import { testApi } from "../helpers/http.ts";
import { editJson, openTestService, sampleTask } from "../helpers/workspace.ts";

/** A workspace whose task type is still at version 1 (priority optional, a `legacy` field). */
function v1(f: Record<string, any>): void {
  const task = f["definitions/card-types/task.json"];
  task.schema_version = 1;
  delete task.migrations;
  task.fields = task.fields.map((x: any) => (x.id === "priority" ? { ...x, required: false, default: undefined } : x));
  task.fields.push({ id: "legacy", type: "string" });
  task.searchable_fields = ["description"];
}

describe("POST /cards/{id}/upgrade-schema", () => {
  test("applies field_defaults, drops removed fields, bumps schema_version, emits schema_upgraded", async () => {
    const old = await testApi({ edit: v1 });
    const card = await old.task({ fields: { legacy: "keep me?", description: "d" } });
    expect(card.schema_version).toBe(1);
    expect(card.fields.priority).toBeUndefined();
    old.close();
    writeFileSync(join(old.dir, "definitions/card-types/task.json"), JSON.stringify(sampleTask()));
    const svc = await openTestService(old.dir);
    const app = createHttpApp(svc);
    const post = async (path: string, body: unknown) => {
      const r = await app.fetch(new Request(`http://x/v1${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
      return { status: r.status, headers: r.headers, body: (await r.json()) as any };
    };
    try {
      // reads still show the stored (old) fields; PATCH validates against the current schema
      const dry = await post(`/cards/${card.id}/upgrade-schema`, { dry_run: true });
      expect(dry.status).toBe(200);
      expect(dry.headers.get("dry-run")).toBe("true");
      expect(JSON.parse(dry.headers.get("upgrade-report")!)).toEqual({ from: 1, to: 2, defaults_applied: { priority: "normal" }, fields_dropped: ["legacy"] });
      expect(dry.body.fields).toEqual({ description: "d", priority: "normal" });
      expect(svc.store.getCard(card.id)!.schema_version).toBe(1);

      expect((await post(`/cards/${card.id}/upgrade-schema`, { target_version: 3 })).body.error).toBe("schema_version_mismatch");
      const done = await post(`/cards/${card.id}/upgrade-schema`, {});
      expect(done.status).toBe(200);
      expect(done.body.schema_version).toBe(2);
      expect(done.body.version).toBe(2);
      expect(done.body.fields.legacy).toBeUndefined();
      const ev = svc.store.listEvents({ cardId: card.id, types: ["schema_upgraded"], limit: 5 });
      expect(ev[0]!.diff).toEqual({ from: 1, to: 2, defaults_applied: { priority: "normal" }, fields_dropped: ["legacy"] });
      const down = await post(`/cards/${card.id}/upgrade-schema`, { target_version: 1 });
      expect(down.status).toBe(422);
      expect(down.body.error).toBe("schema_version_mismatch");
      expect(down.body.message).toContain("downgrades are refused"); // a downgrade is named as one
      expect(down.body.valid_options).toEqual([2]);
      // already current: nothing changes
      expect((await post(`/cards/${card.id}/upgrade-schema`, {})).body.version).toBe(2);
    } finally {
      svc.close();
    }
  });

  test("an upgrade that would leave a required field empty is refused with a hint", async () => {
    const old = await testApi({ edit: v1 });
    const card = await old.task();
    old.close();
    const t = sampleTask();
    t.migrations = { "2": { from: 1, summary: "no defaults" } };
    writeFileSync(join(old.dir, "definitions/card-types/task.json"), JSON.stringify(t));
    // the main board's saved filter "urgent" names a priority option the stricter target drops
    editJson(old.dir, "definitions/boards/main.json", (b) => { b.presentation.filters.urgent = { "fields.priority": "high" }; });
    const svc = await openTestService(old.dir);
    try {
      const app = createHttpApp(svc);
      const r = await app.fetch(new Request(`http://x/v1/cards/${card.id}/upgrade-schema`, { method: "POST", body: "{}" }));
      const body = (await r.json()) as any;
      expect(r.status).toBe(422);
      expect(body.field).toBe("priority");
      expect(body.hint).toContain("field_defaults");
    } finally {
      svc.close();
    }
  });
});

describe("upgrade-schema against a stricter target", () => {
  /** The task type at version 3, changed by `edit`; the card at version 2 made before. */
  async function upgradeTo(edit: (t: any) => void, make: (api: Awaited<ReturnType<typeof testApi>>) => Promise<any>) {
    const old = await testApi();
    const card = await make(old);
    old.close();
    const t = sampleTask();
    t.schema_version = 3;
    t.migrations = { ...t.migrations, "3": { from: 2, summary: "stricter" } };
    edit(t);
    writeFileSync(join(old.dir, "definitions/card-types/task.json"), JSON.stringify(t));
    // the main board's saved filter "urgent" names a priority option the stricter target drops
    editJson(old.dir, "definitions/boards/main.json", (b) => { b.presentation.filters.urgent = { "fields.priority": "high" }; });
    const svc = await openTestService(old.dir);
    const app = createHttpApp(svc);
    const r = await app.fetch(new Request(`http://x/v1/cards/${card.id}/upgrade-schema`, { method: "POST", body: "{}" }));
    const out = { status: r.status, body: (await r.json()) as any, report: r.headers.get("upgrade-report") };
    svc.close();
    return out;
  }

  test("a default of \"me\" for a user field is stored as the upgrading actor, as create and patch store it (before: the literal \"me\")", async () => {
    const r = await upgradeTo(
      (t) => {
        t.fields.push({ id: "upgraded_by", type: "user" });
        t.fields.find((f: any) => f.id === "evidence").item_fields.push({ id: "checked_by", type: "user", default: "me" });
        t.migrations["3"].field_defaults = { upgraded_by: "me" };
      },
      async (api) => {
        const c = await api.task();
        return (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: c.version, entry: { note: "n" } })).body.card;
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.fields.upgraded_by).toBe("ada");
    expect(r.body.fields.evidence[0].checked_by).toBe("ada");
    expect(JSON.parse(r.report!).defaults_applied).toMatchObject({ upgraded_by: "ada" });
  });

  test("keys of repeating entries the target no longer declares are dropped and reported", async () => {
    const r = await upgradeTo(
      (t) => { t.fields.find((f: any) => f.id === "evidence").item_fields = [{ id: "note", type: "text", required: true }]; },
      async (api) => {
        const c = await api.task();
        return (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: c.version, entry: { note: "n", by: "ada" } })).body.card;
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.fields.evidence[0]).toEqual({ entry_id: expect.stringMatching(/^ent_/), note: "n" });
    expect(JSON.parse(r.report!).fields_dropped).toEqual(["evidence.by"]);
  });

  test("an item field's default that fills entries is reported; an earlier migration may name a field the target removed", async () => {
    const r = await upgradeTo(
      (t) => {
        t.fields.find((f: any) => f.id === "evidence").item_fields.push({ id: "kind", type: "enum", options: ["a", "b"], required: true, default: "a" });
        t.fields = t.fields.filter((f: any) => f.id !== "branch");
        t.searchable_fields = t.searchable_fields.filter((f: string) => f !== "branch");
        t.migrations["2"].field_defaults.branch = "main"; // history naming a field the target drops
      },
      async (api) => {
        const c = await api.task();
        return (await api.post(`/cards/${c.id}/fields/evidence/append`, { version: c.version, entry: { note: "n" } })).body.card;
      },
    );
    expect(r.status).toBe(200);
    expect(r.body.fields.evidence[0]).toMatchObject({ note: "n", kind: "a" });
    // before: defaults_applied {} while every entry gained kind
    expect(JSON.parse(r.report!).defaults_applied).toEqual({ "evidence.kind": "a" });
  });

  test("every value that no longer fits is named at once, with how to go on", async () => {
    const r = await upgradeTo(
      (t) => {
        const priority = t.fields.find((f: any) => f.id === "priority");
        priority.options = ["low", "normal", "high"];
        delete priority.option_themes?.urgent;
        t.fields.find((f: any) => f.id === "estimate_hours").max = 20;
      },
      (api) => api.task({ fields: { priority: "urgent", estimate_hours: 50 } }),
    );
    expect(r.status).toBe(422);
    expect(r.body.message).toStartWith("upgrade to schema_version 3: ");
    expect(r.body.message).toContain("urgent");
    expect(r.body.message).toContain("estimate_hours");
    expect(r.body.hint).toContain("change the card first");
  });

  test("a status the target's allowed_columns leave out is refused, with the columns", async () => {
    const r = await upgradeTo((t) => { t.allowed_columns = ["todo", "doing", "review", "done"]; }, (api) => api.task({ status: "backlog" }));
    expect([r.status, r.body.field, r.body.valid_options]).toEqual([422, "status", ["todo", "doing", "review", "done"]]);
  });
});

describe("artifacts", () => {
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  test("upload stores bytes content-addressed with a sniffed type, sets the field, version +1, artifact_added", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const up = await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: png }));
      expect(up.status).toBe(201);
      const card = (await up.json()) as any;
      expect(card.version).toBe(2);
      expect(card.fields.output).toMatchObject({ mime: "image/png", size: 12 });
      expect(card.fields.output.uri).toBe(`artifacts/sha256/${card.fields.output.sha256.slice(0, 2)}/${card.fields.output.sha256}`);
      const ev = (await api.get(`/cards/${c.id}/events`)).body.items.at(-1);
      expect(ev.type).toBe("artifact_added");
      expect(ev.diff).toMatchObject({ field: "output", sha256: card.fields.output.sha256 });
      const down = await app.fetch(new Request(`http://x/v1/${card.fields.output.uri}`));
      expect(down.status).toBe(200);
      expect(down.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await down.arrayBuffer())).toEqual(png);
      // the same upload again is a no-op: same card, same version, no event
      const same = await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: png }));
      expect([same.status, ((await same.json()) as any).version]).toEqual([201, 2]);
      expect((await api.get(`/cards/${c.id}/events`)).body.items.filter((e: any) => e.type === "artifact_added")).toHaveLength(1);
      // the same bytes again: deduplicated, same uri
      const c2 = await api.task();
      const again = (await (await app.fetch(new Request(`http://x/v1/cards/${c2.id}/artifacts/output`, { method: "POST", body: png, headers: { "content-type": "application/x-custom" } }))).json()) as any;
      expect(again.fields.output.uri).toBe(card.fields.output.uri);
      // a declared type wins over sniffing for new bytes
      const csv = (await (await app.fetch(new Request(`http://x/v1/cards/${c2.id}/artifacts/output`, { method: "POST", body: "a,b\n1,2\n", headers: { "content-type": "text/csv" } }))).json()) as any;
      expect(csv.fields.output.mime).toBe("text/csv");
    } finally {
      api.close();
    }
  });

  test("every traversal form reads as 404", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      for (const p of ["../../etc/passwd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "sha256/../../cards.db", "/etc/passwd", "sha256\\ab\\cd", "sha256/00/" + "0".repeat(64), "..%5c..%5ccards.db", "sha256/ab/" + "a".repeat(63)]) {
        const r = await app.fetch(new Request(`http://x/v1/artifacts/${p}`));
        expect(r.status).toBe(404);
        expect(((await r.json()) as any).error).toBe("not_found");
      }
    } finally {
      api.close();
    }
  });

  test("a non-artifact field, a uri-policy field and an unknown card are refused", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const wrong = await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/priority`, { method: "POST", body: png }));
      expect(wrong.status).toBe(422);
      expect(((await wrong.json()) as any).valid_options).toEqual(["output"]);
      const bug = (await api.post("/cards", { type_id: "bug", title: "b", fields: { steps: "s" } })).body;
      const uri = await app.fetch(new Request(`http://x/v1/cards/${bug.id}/artifacts/logs`, { method: "POST", body: png }));
      expect(uri.status).toBe(422);
      expect((await app.fetch(new Request("http://x/v1/cards/card_0000000000000000/artifacts/output", { method: "POST", body: png }))).status).toBe(404);
      // uri-policy fields take external URIs through PATCH
      expect((await api.patch(`/cards/${bug.id}`, { version: 1, fields: { logs: { uri: "https://ci.example/run/1" } } })).status).toBe(200);
    } finally {
      api.close();
    }
  });

  test("an upload over the limit is 413 and stores nothing", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const r = await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: "x", headers: { "content-length": String(65 * 1024 * 1024) } }));
      expect(r.status).toBe(413);
      expect((await api.get(`/cards/${c.id}`)).body.version).toBe(1);
    } finally {
      api.close();
    }
  });

  test("a chunked upload over the limit (no Content-Length) is 413, leaves no temp file, and the server goes on", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const chunk = new Uint8Array(1024 * 1024);
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(ctl) {
          if (sent >= 65) return ctl.close();
          sent++;
          ctl.enqueue(chunk);
        },
      });
      const r = await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body, duplex: "half" } as RequestInit));
      expect(r.status).toBe(413);
      await Bun.sleep(50); // an async write failing after the answer would surface here
      expect(readdirSync(join(api.dir, ".cards/artifacts/tmp"))).toEqual([]);
      expect((await api.get(`/cards/${c.id}`)).body.version).toBe(1);
      expect((await app.fetch(new Request("http://x/v1/health"))).status).toBe(200);
    } finally {
      api.close();
    }
  });

  test("HEAD on an artifact answers like GET and leaves no file open", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const bytes = new Uint8Array(1_000_000).map((_, i) => i % 251);
      const card = (await (await app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body: bytes }))).json()) as any;
      const openBlobs = () => readdirSync("/proc/self/fd").filter((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`).includes(card.fields.output.sha256); } catch { return false; } }).length;
      for (let i = 0; i < 30; i++) {
        const r = await app.fetch(new Request(`http://x/v1/${card.fields.output.uri}`, { method: "HEAD" }));
        expect(r.status).toBe(200);
        expect(r.headers.get("content-length")).toBe("1000000");
      }
      await Bun.sleep(50);
      expect(openBlobs()).toBe(0);
    } finally {
      api.close();
    }
  });

  test("Idempotency-Key: the same key with other bytes or another type is 422; the same upload replays", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const c = await api.task();
      const up = (body: string, type = "text/plain") => app.fetch(new Request(`http://x/v1/cards/${c.id}/artifacts/output`, { method: "POST", body, headers: { "idempotency-key": "k1", "content-type": type } }));
      const first = await up("first");
      expect(first.status).toBe(201);
      const sha = ((await first.json()) as any).fields.output.sha256;
      const replay = await up("first");
      expect(replay.status).toBe(201);
      expect(((await replay.json()) as any).version).toBe(2);
      for (const [body, type] of [["second", "text/plain"], ["first", "text/csv"]] as const) {
        const r = await up(body, type);
        expect(r.status).toBe(422);
        expect(((await r.json()) as any).error).toBe("idempotency_key_reused");
      }
      expect((await api.get(`/cards/${c.id}`)).body.fields.output).toMatchObject({ sha256: sha, mime: "text/plain" });
    } finally {
      api.close();
    }
  });

  test("each upload records its declared type, even for bytes stored before; a Content-Type that is no media type is 422", async () => {
    const api = await testApi();
    try {
      const app = createHttpApp(api.svc);
      const [a, b] = [await api.task(), await api.task()];
      const up = (id: string, type?: string) => app.fetch(new Request(`http://x/v1/cards/${id}/artifacts/output`, { method: "POST", body: "same bytes", headers: type ? { "content-type": type } : {} }));
      expect(((await (await up(a.id, "text/markdown")).json()) as any).fields.output.mime).toBe("text/markdown");
      const second = (await (await up(b.id, "text/plain")).json()) as any;
      expect(second.fields.output.mime).toBe("text/plain");
      // the field as read can be written back unchanged
      expect((await api.patch(`/cards/${b.id}`, { version: second.version, fields: { output: second.fields.output } })).status).toBe(200);
      const bad = await up(b.id, "x");
      expect(bad.status).toBe(422);
      expect(((await bad.json()) as any)).toMatchObject({ error: "validation_failed", field: "Content-Type", value: "x" });
    } finally {
      api.close();
    }
  });
});
