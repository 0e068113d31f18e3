/**
 * docs/definitions.md names every key of every definition file, every icon alias, theme
 * token and field type, in backticks. The keys are read from the valibot schemas of
 * src/definitions/schemas.ts, so a key added there without a line in the doc fails here.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as S from "../../src/definitions/schemas.ts";
import { FIELD_TYPES } from "../../src/domain/types.ts";

const DOC = readFileSync(resolve(import.meta.dir, "../../docs/definitions.md"), "utf8");

/** A valibot schema as seen at runtime: only the parts the walk follows. */
interface Node {
  type?: string;
  entries?: Record<string, Node>;
  pipe?: Node[];
  wrapped?: Node;
  item?: Node;
  value?: Node;
  options?: unknown;
}

/**
 * Every key of every strict object reachable from `schema`: through a pipe (`strict` wraps
 * v.strictObject as `pipe(unknown, check, strict_object)`), optional, array and record.
 * `own` is the keys of the top strict object only.
 */
function keysOf(schema: unknown): { own: string[]; all: Set<string> } {
  const all = new Set<string>();
  const seen = new Set<Node>();
  let own: string[] = [];
  const walk = (n: Node | undefined, top: boolean): void => {
    if (!n || typeof n !== "object" || seen.has(n)) return;
    seen.add(n);
    if (n.type === "strict_object" && n.entries) {
      if (top && own.length === 0) own = Object.keys(n.entries);
      for (const [k, child] of Object.entries(n.entries)) {
        all.add(k);
        walk(child, false);
      }
    }
    if (Array.isArray(n.pipe)) for (const p of n.pipe) walk(p, top);
    walk(n.wrapped, top);
    walk(n.item, false);
    walk(n.value, false);
    if (Array.isArray(n.options)) for (const o of n.options) if (o && typeof o === "object") walk(o as Node, false);
  };
  walk(schema as Node, true);
  return { own, all };
}

const SCHEMAS: Record<string, unknown> = {
  WorkspaceSchema: S.WorkspaceSchema,
  SettingsSchema: S.SettingsSchema,
  ColumnSchema: S.ColumnSchema,
  LinkTypeSchema: S.LinkTypeSchema,
  UserDefSchema: S.UserDefSchema,
  CardTypeSchema: S.CardTypeSchema,
  FieldDefSchema: S.FieldDefSchema,
  ItemFieldSchema: S.ItemFieldSchema,
  MigrationSchema: S.MigrationSchema,
  BoardSchema: S.BoardSchema,
  MonitorsSchema: S.MonitorsSchema,
  PresentationSchema: S.PresentationSchema,
  ViewSchema: S.ViewSchema,
  ExtensionSchema: S.ExtensionSchema,
};

const inBackticks = (word: string): boolean => DOC.includes(`\`${word}\``);

describe("docs/definitions.md", () => {
  test("the walk finds the keys of a strict object (a guard against a changed valibot shape)", () => {
    expect(keysOf(S.ColumnSchema).own).toEqual(["id", "name"]);
    expect(keysOf(S.BoardSchema).all).toContain("idle_after"); // nested: monitors
    expect(keysOf(S.BoardSchema).all).toContain("enforce_transitions"); // nested: settings
    expect(keysOf(S.FieldDefSchema).all).toContain("color"); // nested: option_themes
  });

  for (const [name, schema] of Object.entries(SCHEMAS)) {
    test(`names every key of ${name}`, () => {
      const { own, all } = keysOf(schema);
      expect(own.length).toBeGreaterThan(0);
      const missing = [...all].filter((k) => !inBackticks(k));
      expect(missing).toEqual([]);
    });
  }

  test("lists every icon alias", () => {
    expect(S.ICON_ALIASES.filter((a) => !inBackticks(a))).toEqual([]);
  });

  test("lists every theme token", () => {
    expect(S.THEME_TOKENS.filter((t) => !inBackticks(t))).toEqual([]);
  });

  test("lists every field type", () => {
    expect(FIELD_TYPES.filter((t) => !inBackticks(t))).toEqual([]);
  });
});
