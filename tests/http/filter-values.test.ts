/**
 * A caller's filter (take-next, the tool server's list) that names a value no card can
 * hold is refused with the valid options, instead of matching nothing: an agent that
 * typed "hgih" would otherwise read "no work left". Enum options, and tags under a locked
 * tag policy, as status and type_id already were. A value cards still hold is allowed.
 */
import { describe, expect, test } from "bun:test";
import { testApi } from "../helpers/http.ts";
import { editJson } from "../helpers/workspace.ts";

describe("filter values checked against the definitions", () => {
  test("an enum option that does not exist is refused with the options; excluding it is harmless", async () => {
    const api = await testApi();
    try {
      const r = await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": "hgih" }, dry_run: true });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "unknown_enum", field: "filter.fields.priority", value: "hgih", valid_options: ["low", "normal", "high", "urgent"] });
      expect(r.body.message).toContain("is not an option of fields.priority");
      const inList = await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": { $in: ["high", "urgen"] } }, dry_run: true });
      expect(inList.status).toBe(422);
      expect([inList.body.error, inList.body.field]).toEqual(["unknown_enum", "filter.fields.priority.$in[1]"]); // as a write names the value (unknown_enum), and which member
      // a number or a boolean is never an option (it was let through: "no work left")
      for (const [filter, field] of [[{ "fields.priority": 5 }, "filter.fields.priority"], [{ "fields.priority": true }, "filter.fields.priority"], [{ "fields.priority": { $in: ["high", 7] } }, "filter.fields.priority.$in[1]"]] as const) {
        const bad = await api.post("/cards/take-next", { type_id: "task", filter, dry_run: true });
        // as a write of it is: a value of the wrong type, not an unknown option
        expect([bad.status, bad.body.error, bad.body.field, bad.body.valid_options]).toEqual([422, "validation_failed", field, ["low", "normal", "high", "urgent"]]);
      }
      expect((await api.post("/cards", { type_id: "task", title: "x", fields: { priority: 5 }, dry_run: true })).body.error).toBe("validation_failed");
      const card = await api.task({ fields: { priority: "high" } });
      expect((await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": null }, dry_run: true })).status).toBe(200); // unset
      for (const filter of [{ "fields.priority": "high" }, { "fields.priority": { $ne: "hgih" } }, { "fields.priority": { $nin: ["hgih"] } }]) {
        const ok = await api.post("/cards/take-next", { type_id: "task", filter, dry_run: true });
        expect([ok.status, ok.body.card?.id]).toEqual([200, card.id]);
      }
    } finally {
      api.close();
    }
  });

  test("at most 16 values outside the options are looked up; a 17th is refused saying so", async () => {
    const api = await testApi();
    try {
      const values = Array.from({ length: 17 }, (_, i) => `gone-${i}`);
      const r = await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": { $in: values } }, dry_run: true });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "validation_failed", field: "filter.fields.priority.$in[16]", value: "gone-16", valid_options: ["low", "normal", "high", "urgent"] });
      expect(r.body.message).toStartWith("a filter may name at most 16 values outside the known ones");
      // 16 are looked up: the first no card holds is the one refused
      const sixteen = await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": { $in: values.slice(0, 16) } }, dry_run: true });
      expect(sixteen.status).toBe(422);
      expect(sixteen.body.value).toBe("gone-0");
    } finally {
      api.close();
    }
  });

  test("the options are those of the types in scope; a field that is an enum in no type in scope is not checked", async () => {
    const api = await testApi();
    try {
      // no type_id nor board_id: the default board's types; severity is a bug field
      const r = await api.post("/cards/take-next", { board_id: "bugs", filter: { "fields.severity": "majr" }, dry_run: true });
      expect(r.status).toBe(422);
      expect(r.body.valid_options).toEqual(["critical", "major", "minor", "trivial"]);
      const text = await api.post("/cards/take-next", { type_id: "task", filter: { title: "anything at all" }, dry_run: true });
      expect(text.status).toBe(200);
    } finally {
      api.close();
    }
  });

  test("a tag outside the tag_set is refused while tag_policy is locked", async () => {
    const api = await testApi();
    try {
      const r = await api.post("/cards/take-next", { filter: { tags: { $has: "frontnd" } }, dry_run: true });
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "unknown_tag", field: "filter.tags.$has", value: "frontnd" });
      // the same tag as a list parameter, and in a write: the same code
      expect((await api.get("/cards?tag=frontnd")).body).toMatchObject({ error: "unknown_tag", field: "tag", value: "frontnd" });
      expect((await api.post("/cards", { type_id: "task", title: "t", tags: ["frontnd"] })).body).toMatchObject({ error: "unknown_tag", value: "frontnd" });
      expect(r.body.valid_options).toContain("frontend");
      expect(r.body.message).toContain("tag_set");
      expect((await api.post("/cards/take-next", { filter: { tags: { $has: "frontend" } }, dry_run: true })).status).toBe(200);
    } finally {
      api.close();
    }
  });

  test("a tag given decomposed (NFD) finds the cards a write tagged with it, in ?tag= and in a filter (before: nothing)", async () => {
    const api = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.tag_policy = "open"; } });
    try {
      const nfd = "u\u0308ber";
      const id = (await api.post("/cards", { type_id: "task", title: "t", tags: [nfd] })).body.id;
      expect((await api.get(`/cards?tag=${encodeURIComponent(nfd)}`)).body.items.map((c: { id: string }) => c.id)).toEqual([id]);
      expect((await api.post("/cards/take-next", { type_id: "task", filter: { tags: { $has: nfd } }, dry_run: true })).body.card?.id).toBe(id);
    } finally {
      api.close();
    }
  });

  test("a tag the tag_set spells decomposed is found in either form, in a caller's filter and in a board's saved filter, under an open policy too", async () => {
    const nfd = "u\u0308ber", nfc = "\u00fcber";
    const api = await testApi({ edit: (f) => {
      const ws = f["definitions/workspace.json"] as any;
      ws.settings.tag_policy = "open";
      ws.tag_set.push(nfd);
      (f["definitions/boards/main.json"] as any).presentation.filters = { ...(f["definitions/boards/main.json"] as any).presentation.filters, uber: { tags: { $has: nfc } } };
    } });
    try {
      const id = (await api.post("/cards", { type_id: "task", title: "t", tags: [nfc] })).body.id;
      expect((await api.get(`/cards/${id}`)).body.tags).toEqual([nfd]); // stored in tag_set's spelling
      for (const given of [nfc, nfd]) {
        expect((await api.post("/cards/take-next", { type_id: "task", filter: { tags: { $has: given } }, dry_run: true })).body.card?.id).toBe(id);
      }
      // before: the filter's operand was composed, and the board's saved filter found nothing
      expect((await api.get("/cards?board_id=main&filter=uber")).body.items.map((c: { id: string }) => c.id)).toEqual([id]);
    } finally {
      api.close();
    }
  });

  test("a tag tag_set spells decomposed is found by ?tag= given composed: it names the tag as tag_set spells it, as a write stores it", async () => {
    const nfd = "cafe\u0301";
    const api = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).tag_set.push(nfd); } });
    try {
      const card = await api.task({ tags: ["caf\u00e9"] });
      expect(card.tags).toEqual([nfd]);
      const r = await api.get(`/cards?tag=${encodeURIComponent("caf\u00e9")}`);
      expect([r.status, r.body.items?.map((c: { id: string }) => c.id)]).toEqual([200, [card.id]]);
    } finally {
      api.close();
    }
  });

  test("a tags field's operand is read as a tag is: a decomposed one finds the value a write stored composed (before: nothing)", async () => {
    const api = await testApi({ edit: (f) => { (f["definitions/workspace.json"] as any).settings.tag_policy = "open"; } });
    try {
      const bug = await api.post("/cards", { type_id: "bug", title: "b", fields: { severity: "minor", steps: "s", areas: ["cafe\u0301"] } });
      expect(bug.body.fields.areas).toEqual(["caf\u00e9"]);
      for (const given of ["cafe\u0301", "caf\u00e9"]) {
        expect((await api.post("/cards/take-next", { type_id: "bug", filter: { "fields.areas": { $has: given } }, dry_run: true })).body.card?.id).toBe(bug.body.id);
      }
    } finally {
      api.close();
    }
  });

  test("a value the definitions dropped but cards still hold is allowed, so those cards can be found", async () => {
    const api = await testApi();
    try {
      const card = await api.task({ fields: { priority: "low" }, tags: ["flaky"] });
      editJson(api.dir, "definitions/card-types/task.json", (t) => {
        const f = t.fields.find((x: any) => x.id === "priority");
        f.options = f.options.filter((o: string) => o !== "low");
        delete f.option_themes?.low;
      });
      editJson(api.dir, "definitions/workspace.json", (w) => { w.tag_set = w.tag_set.filter((t: string) => t !== "flaky"); });
      expect((await api.post("/workspace/reload")).status).toBe(200);
      for (const filter of [{ "fields.priority": "low" }, { tags: { $has: "flaky" } }]) {
        const r = await api.post("/cards/take-next", { type_id: "task", filter, dry_run: true });
        expect([r.status, r.body.card?.id]).toEqual([200, card.id]);
      }
      // a value no card holds is still refused, with the options now loaded
      const gone = await api.post("/cards/take-next", { type_id: "task", filter: { "fields.priority": "lowest" }, dry_run: true });
      expect(gone.body.valid_options).toEqual(["normal", "high", "urgent"]);
    } finally {
      api.close();
    }
  });
});

describe("owner values in a filter", () => {
  test("a name that is no registered user and owns no card is unknown_user, as in ?owner= (it read as \"nothing there\")", async () => {
    const api = await testApi();
    try {
      const as = (actor: string) => ({ "x-service-actor": actor });
      const list = (filter: unknown, actor = "ada") => api.post("/cards/take-next", { filter: { $or: [filter, { title: "never" }] }, dry_run: true }, as(actor));
      const typo = await list({ owner: "agnet-1" });
      expect([typo.status, typo.body.error, typo.body.field, typo.body.message]).toEqual([422, "unknown_user", "filter.$or[0].owner", '"agnet-1" is not a registered user and owns no card']);
      expect(typo.body.valid_options).toEqual(expect.arrayContaining(["ada", "agent-1", "me"]));
      expect((await list({ owner: { $in: ["ada", "agnet-1"] } })).body.field).toBe("filter.$or[0].owner.$in[1]");
      // registered, me, the caller itself (registered or not), an owner that is not registered but owns a card
      for (const [filter, actor] of [[{ owner: "agent-1" }, "ada"], [{ owner: "me" }, "ada"], [{ owner: "zed" }, "zed"], [{ owner: { $ne: "agnet-1" } }, "ada"]] as const) {
        expect([filter, (await list(filter, actor)).status]).toEqual([filter, 200]);
      }
      await api.task({ title: "for ghost", status: "todo" });
      const given = await api.post("/cards/take-next", { assign_to: "ghost", filter: { title: "for ghost" } }, as("ada")); // take-next skips the registry
      expect(given.body.card?.owner).toBe("ghost");
      expect((await list({ owner: "ghost" })).status).toBe(200);
      // ghost owns a task, not a bug: a bug filter naming ghost is no typo, as ?owner=ghost&type_id=bug is not
      const bugs = await api.post("/cards/take-next", { type_id: "bug", filter: { owner: "ghost" }, dry_run: true }, as("ada"));
      expect([bugs.status, bugs.body.card]).toEqual([200, null]);
      expect((await api.get("/cards?owner=ghost&type_id=bug")).status).toBe(200);
      // owners are looked up by the owner index: more than the 16 lookups other values get
      const many = Array.from({ length: 20 }, (_, i) => `ghost${i}`);
      for (const name of many) {
        await api.task({ title: `for ${name}`, status: "todo" });
        await api.post("/cards/take-next", { assign_to: name, filter: { title: `for ${name}` } }, as("ada"));
      }
      expect((await api.post("/cards/take-next", { filter: { owner: { $in: many } }, dry_run: true }, as("ada"))).status).toBe(200);
    } finally {
      api.close();
    }
  });
});

describe("an unknown card type or column: one message wherever it is given", () => {
  test("create, list, take-next and a patch word it alike", async () => {
    const api = await testApi();
    try {
      const card = await api.task();
      const types = [
        await api.post("/cards", { type_id: "nope", title: "x" }),
        await api.get("/cards?type_id=nope"),
        await api.post("/cards/take-next", { type_id: "nope", dry_run: true }),
      ];
      for (const r of types) expect([r.status, r.body.message, r.body.field]).toEqual([422, '"nope" is not a card type of this workspace', "type_id"]);
      const statuses = [
        await api.post("/cards", { type_id: "task", title: "x", status: "nope" }),
        await api.get("/cards?status=nope"),
        await api.post("/cards/take-next", { status: "nope", dry_run: true }),
        await api.call("PATCH", `/cards/${card.id}`, { version: card.version, status: "nope" }),
      ];
      for (const r of statuses) expect([r.status, r.body.message, r.body.field]).toEqual([422, '"nope" is not a column of this workspace', "status"]);
      // the columns offered are the ones the card's type allows (review cards never sit in backlog)
      const review = await api.post("/cards", { type_id: "review", title: "x", status: "nope" });
      expect([review.status, review.body.message, review.body.valid_options]).toEqual([422, '"nope" is not a column of this workspace', ["todo", "doing", "review", "done"]]);
      expect(statuses[0]!.body.valid_options).toEqual(["backlog", "todo", "doing", "review", "done"]);
    } finally {
      api.close();
    }
  });
});

describe("GET /cards owner", () => {
  test("a typo'd owner is unknown_user with the registered users; an unregistered actor that owns cards and owner=me are fine", async () => {
    const api = await testApi();
    try {
      const r = await api.get("/cards?owner=agnet-1");
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ error: "unknown_user", field: "owner", value: "agnet-1" });
      expect(r.body.valid_options).toContain("agent-1");
      const card = await api.task({ status: "todo" });
      // take-next skips the registry (SPEC): assign_to may name anyone
      const taken = await api.post("/cards/take-next", { assign_to: "visitor-9", filter: { title: card.title } });
      expect(taken.body.card.owner).toBe("visitor-9");
      expect((await api.get("/cards?owner=visitor-9")).body.items.map((c: any) => c.id)).toEqual([card.id]);
      expect((await api.get("/cards?owner=me", { "x-service-actor": "newcomer" })).body.items).toEqual([]);
      // an unregistered agent asking by its own name before it holds a card
      expect((await api.get("/cards?owner=newcomer", { "x-service-actor": "newcomer" })).body.items).toEqual([]);
    } finally {
      api.close();
    }
  });
});

describe("$all of three or more values (a bound list read from the JSON)", () => {
  test("matches the card holding every one, on tags and on a multiple field; one value it lacks matches nothing", async () => {
    const api = await testApi();
    try {
      const card = await api.task({ tags: ["frontend", "backend", "infra"], fields: { components: ["api", "cli", "ui"] } });
      await api.task({ tags: ["frontend", "backend"], fields: { components: ["api", "cli"] } });
      const take = async (filter: unknown) => (await api.post("/cards/take-next", { type_id: "task", filter, dry_run: true })).body.card?.id ?? null;
      expect(await take({ tags: { $all: ["frontend", "backend", "infra"] } })).toBe(card.id);
      expect(await take({ "fields.components": { $all: ["api", "cli", "ui"] } })).toBe(card.id);
      expect(await take({ tags: { $all: ["frontend", "backend", "docs"] } })).toBeNull();
      expect(await take({ "fields.components": { $all: ["api", "cli", "docs"] } })).toBeNull();
    } finally {
      api.close();
    }
  });
});
