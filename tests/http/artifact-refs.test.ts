/**
 * SPEC (field types): with policy `local`, an artifact uri "must resolve inside the
 * workspace artifact store". A local uri whose bytes were never stored is refused on
 * create, PATCH and entries (422, the field's path, how to upload); once the bytes are
 * stored, any card may name them.
 */
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { testApi } from "../helpers/http.ts";

const NEVER_STORED = `artifacts/sha256/ab/ab${"0".repeat(62)}`;

/** A task type whose evidence entries may carry a file (an artifact item field). */
const withEntryFiles = (f: Record<string, any>): void => {
  const task = f["definitions/card-types/task.json"];
  task.fields.find((x: any) => x.id === "evidence").item_fields.push({ id: "file", type: "artifact", artifact_policy: "local" });
};

test("a local artifact uri must name stored bytes: create, patch and entries", async () => {
  const api = await testApi({ edit: withEntryFiles });
  try {
    const missing = await api.post("/cards", { type_id: "task", title: "t", fields: { output: { uri: NEVER_STORED } } });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: "validation_failed", field: "output.uri", value: NEVER_STORED });
    expect(missing.body.hint).toContain("POST /cards/{id}/artifacts/{field}");

    // bytes stored through one card may be named by another
    const a = await api.task();
    const up = await api.call("POST", `/cards/${a.id}/artifacts/output`, "the report", { "content-type": "text/plain" });
    expect(up.status).toBe(201);
    const stored = up.body.fields.output.uri as string;
    const b = await api.post("/cards", { type_id: "task", title: "b", fields: { output: { uri: stored } } });
    expect(b.status).toBe(201);
    expect(b.body.fields.output).toEqual({ uri: stored });

    const patched = await api.patch(`/cards/${b.body.id}`, { version: 1, fields: { output: { uri: NEVER_STORED } } });
    expect(patched.status).toBe(422);
    expect(patched.body).toMatchObject({ error: "validation_failed", field: "output.uri" });
    expect((await api.get(`/cards/${b.body.id}`)).body).toMatchObject({ version: 1, fields: { output: { uri: stored } } });

    const entry = await api.post(`/cards/${b.body.id}/fields/evidence/append`, { version: 1, entry: { note: "see file", file: { uri: NEVER_STORED } } });
    expect(entry.status).toBe(422);
    expect(entry.body).toMatchObject({ error: "validation_failed", field: "evidence.file.uri" });
    const ok = await api.post(`/cards/${b.body.id}/fields/evidence/append`, { version: 1, entry: { note: "see file", file: { uri: stored } } });
    expect(ok.status).toBe(201);
    const entryId = ok.body.entry_id as string;
    const edit = await api.patch(`/cards/${b.body.id}/fields/evidence/${entryId}`, { version: 2, entry: { file: { uri: NEVER_STORED } } });
    expect(edit.status).toBe(422);
    expect(edit.body).toMatchObject({ error: "validation_failed", field: "evidence.file.uri" });
  } finally {
    api.close();
  }
});

test("entries given at create are checked too; the hint for an entry's file says where bytes can be uploaded", async () => {
  const api = await testApi({ edit: withEntryFiles });
  try {
    const r = await api.post("/cards", { type_id: "task", title: "t", fields: { evidence: [{ note: "ok" }, { note: "n", file: { uri: NEVER_STORED } }] } });
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ error: "validation_failed", field: "evidence[1].file.uri", value: NEVER_STORED });
    expect(r.body.hint).toContain("top-level artifact field of any card");
  } finally {
    api.close();
  }
});

test("a uri sent back unchanged is not checked again (a card whose bytes went missing can still be edited)", async () => {
  const api = await testApi({ edit: withEntryFiles });
  try {
    const a = await api.task();
    const up = await api.call("POST", `/cards/${a.id}/artifacts/output`, "the report", { "content-type": "text/plain" });
    const output = up.body.fields.output;
    const added = await api.post(`/cards/${a.id}/fields/evidence/append`, { version: 2, entry: { note: "n", file: { uri: output.uri } } });
    expect(added.status).toBe(201);
    // the bytes go missing (a workspace restored or copied without .cards/artifacts)
    rmSync(join(api.dir, ".cards", "artifacts"), { recursive: true, force: true });
    const patched = await api.patch(`/cards/${a.id}`, { version: 3, title: "renamed", fields: { output } });
    expect(patched.status).toBe(200);
    const edited = await api.patch(`/cards/${a.id}/fields/evidence/${added.body.entry_id}`, { version: 4, entry: { note: "again", file: { uri: output.uri } } });
    expect(edited.status).toBe(200);
    // a new reference to bytes that are not there is still refused
    const other = await api.post("/cards", { type_id: "task", title: "b", fields: { output: { uri: output.uri } } });
    expect(other.status).toBe(422);
  } finally {
    api.close();
  }
});

test("an artifact field that declares no artifact_policy stores uploaded bytes (the default is local)", async () => {
  const api = await testApi({
    edit: (f) => {
      const output = f["definitions/card-types/task.json"].fields.find((x: any) => x.id === "output");
      delete output.artifact_policy;
    },
  });
  try {
    const card = await api.task();
    const up = await api.call("POST", `/cards/${card.id}/artifacts/output`, "the report", { "content-type": "text/plain" });
    expect(up.status).toBe(201);
    expect(up.body.fields.output.uri).toStartWith("artifacts/sha256/");
  } finally {
    api.close();
  }
});
