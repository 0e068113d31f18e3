/** `cards prime`: a compact guide from the live definitions whose commands really work. */
import { beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { assertBinary, cleanEnv, run } from "../helpers/binary.ts";
import { BIN, makeWorkspace } from "../helpers/workspace.ts";

let dir: string;
let text: string;
beforeAll(() => {
  assertBinary();
  dir = makeWorkspace();
  const r = run(["prime", "--dir", dir], { env: { CARDS_ACTOR: "agent-1" } });
  expect(r.code).toBe(0);
  text = r.stdout;
});

describe("cards prime", () => {
  test("mentions every column, board, card type, required field, option and link type", () => {
    for (const c of ["backlog", "todo", "doing", "review", "done"]) expect(text).toContain(c);
    for (const b of ["main (default)", "bugs"]) expect(text).toContain(`- ${b}`);
    for (const t of ["- task:", "- bug:", "- review:"]) expect(text).toContain(t);
    for (const f of ["priority*", "steps*", "verdict*", "severity*", "low|normal|high|urgent", "evidence repeating {note*, at, by}"]) expect(text).toContain(f);
    for (const l of ["depends-on", "blocked-by", "related", "parent", "sent-to"]) expect(text).toContain(l);
    expect(text).toContain("moves backlog>todo, todo>doing|backlog, doing>review|todo, review>done|doing, done>todo");
    // bugs shows bug cards, whose moves main's graph governs: not "any move"
    expect(text).toMatch(/^- bugs: bug; .*bug moves by main's graph/m);
    expect(text).not.toContain("any move");
    expect(text).toContain('You act as "agent-1"');
  });

  test("stays under 1,500 tokens (bytes/4)", () => {
    expect(Buffer.byteLength(text) / 4).toBeLessThan(1500);
  });

  test("follows the live definitions", () => {
    const d = makeWorkspace((f) => { (f["definitions/workspace.json"] as any).columns.push({ id: "archived", name: "Archived" }); });
    expect(run(["prime", "--dir", d]).stdout).toContain("archived (Archived)");
  });

  test("the loop's commands run as printed", () => {
    const commands = [...text.matchAll(/`(cards cards [^`]+)`/g)].map((m) => m[1]!);
    const sh = (cmd: string): any => {
      const r = spawnSync("bash", ["-c", cmd.replace(/^cards /, `'${BIN}' `)], { cwd: dir, env: cleanEnv({ CARDS_ACTOR: "agent-1", CARDS_DIR: dir }), encoding: "utf8" });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      return JSON.parse(r.stdout);
    };
    run(["cards", "create", "--type", "task", "--title", "primed", "--status", "todo", "--dir", dir], { env: { CARDS_ACTOR: "ada" } });
    const find = (prefix: string) => commands.find((c) => c.startsWith(prefix))!;
    const card = sh(find("cards cards take-next")).card;
    expect(card).toMatchObject({ title: "primed", status: "doing", owner: "agent-1" });
    const fill = (c: string, version?: number) => c.replace(/\bID\b/g, card.id).replace(/\bN\b/, String(version)).replace("FILE", join(dir, "out.md"));
    const appended = sh(fill(find("cards cards entries append"), card.version));
    expect(appended.card.fields.evidence).toHaveLength(1);
    writeFileSync(join(dir, "out.md"), "# out\n");
    expect(sh(fill(find("cards cards artifacts put"))).fields.output.size).toBe(6);
    const commented = sh(fill(find("cards cards comments add")));
    expect(commented.comments).toHaveLength(1);
    // the hand-off moves the card on and frees it in one call
    const released = sh(fill(find("cards cards release"), commented.version));
    expect([released.status, released.owner]).toEqual(["review", undefined]);
    expect(find("cards cards patch")).toContain("--status X");
    const history = sh(fill(find("cards cards history"))).items.map((h: any) => h.type);
    expect(history).toContain("comment_added");
    // the card waits in review, released: the next worker's take-next leaves it there
    expect(sh(find("cards cards take-next")).card).toBeNull();
    // a reviewer's take-next finds it and claims it where it is: not done before it is
    // reviewed (the guide's take-next moved it to done, which unblocked its dependants)
    const reviewed = sh(find("cards cards take-next --filter '{\"status\":\"review\"}'")).card;
    expect(reviewed).toMatchObject({ id: card.id, status: "review", owner: "agent-1" });
    const approve = commands.find((c) => c.startsWith("cards cards release") && c.includes("--status done"))!;
    const approved = sh(fill(approve, reviewed.version));
    expect([approved.status, approved.owner]).toEqual(["done", undefined]);
    // the guide says where each type logs and keeps files, and how a card is created ready
    expect(text).toContain("each type logs to its own field: task evidence, review findings");
    expect(text).toContain("(file fields: task output)"); // bug logs holds a URI (artifact_policy uri)
    expect(find("cards cards create")).toContain("--status todo");
    expect(find("cards cards list --owner me")).toBe("cards cards list --owner me");
    // the links line names the command (a planner had to find it through --help)
    const other = run(["cards", "create", "--type", "task", "--title", "after", "--dir", dir], { env: { CARDS_ACTOR: "ada" } });
    const linked = sh(find("cards cards links add").replace("ID", JSON.parse(other.stdout).id).replace("TYPE", "depends-on").replace("TARGET_ID", card.id));
    expect(linked.links).toEqual([expect.objectContaining({ type_id: "depends-on", target: card.id })]);
  });

  test("with two workflows, the loop follows the default board's columns and graph (before: it released an incident to the other workflow's last column)", () => {
    const d = makeWorkspace((f) => {
      for (const k of Object.keys(f)) if (k !== "definitions/workspace.json") delete f[k];
      const w = f["definitions/workspace.json"] as any;
      w.columns = ["new", "triage", "mitigating", "resolved", "done", "draft", "editing", "published"].map((id) => ({ id, name: id }));
      w.settings = { enforce_transitions: false, default_board: "incidents" };
      w.users = [{ id: "agent-1", kind: "agent" }];
      f["definitions/card-types/incident.json"] = { id: "incident", name: "Incident", schema_version: 1, allowed_columns: ["new", "triage", "mitigating", "resolved", "done"], fields: [{ id: "timeline", type: "repeating", item_fields: [{ id: "note", type: "text", required: true }] }] };
      f["definitions/card-types/article.json"] = { id: "article", name: "Article", schema_version: 1, allowed_columns: ["draft", "editing", "published"], fields: [] };
      f["definitions/boards/incidents.json"] = {
        id: "incidents", name: "Incidents", columns: ["new", "triage", "mitigating", "resolved", "done"], card_type_ids: ["incident"], settings: { enforce_transitions: true },
        transitions: { new: ["triage"], triage: ["mitigating", "resolved"], mitigating: ["resolved"], resolved: ["done", "mitigating"], done: [] },
      };
      f["definitions/boards/content.json"] = { id: "content", name: "Content", columns: ["draft", "editing", "published"], card_type_ids: ["article"] };
    });
    const guide = run(["prime", "--dir", d], { env: { CARDS_ACTOR: "agent-1" } }).stdout;
    const commands = [...guide.matchAll(/`(cards cards [^`]+)`/g)].map((m) => m[1]!);
    const sh = (cmd: string): any => {
      const r = spawnSync("bash", ["-c", cmd.replace(/^cards /, `'${BIN}' `)], { cwd: d, env: cleanEnv({ CARDS_ACTOR: "agent-1", CARDS_DIR: d }), encoding: "utf8" });
      expect(r.stderr).toBe("");
      return JSON.parse(r.stdout);
    };
    run(["cards", "create", "--type", "incident", "--title", "db down", "--status", "triage", "--dir", d], { env: { CARDS_ACTOR: "agent-1" } });
    const card = sh(commands.find((c) => c.startsWith("cards cards take-next --filter '{\"blocked\""))!).card;
    expect(card).toMatchObject({ status: "mitigating", owner: "agent-1" });
    const handOff = commands.find((c) => c.startsWith("cards cards release"))!;
    expect(handOff).toContain("--status resolved"); // mitigating may only move to resolved
    const released = sh(handOff.replace("ID", card.id).replace("N", String(card.version)));
    expect([released.status, released.owner]).toEqual(["resolved", undefined]);
    const reviewed = sh(commands.find((c) => c.includes(`'{"status":"resolved"}'`))!).card;
    const approve = commands.find((c) => c.startsWith("cards cards release") && c.includes("--status done"))!;
    expect(sh(approve.replace("ID", reviewed.id).replace("N", String(reviewed.version))).status).toBe("done");
    expect(guide).not.toContain("published`");
  });

  test("an actor that is not registered is told so, with the command that registers it", () => {
    const r = run(["prime", "--dir", dir], { env: { CARDS_ACTOR: "agent-77" } });
    expect(r.stdout).toContain('Note: "agent-77" is not a registered user');
    expect(r.stdout).toContain("`cards users add agent-77 --kind agent`");
    expect(text).not.toContain("is not a registered user");
  });
});
