/** Stored rows map to resources in the wire order canonicalCard defines. */
import { describe, expect, test } from "bun:test";
import { rowToCard } from "../../src/store/sqlite/rows.ts";
import { canonicalCard } from "../../src/domain/card.ts";

const row = (owner: string | null) => ({
  id: "card_0123456789abcdef", type_id: "task", schema_version: 2, title: "t", status: "todo",
  fields: '{"priority":"high"}', owner, tags: '["a"]', version: 3,
  created_at: "2026-01-01T00:00:00.000Z", updated_at: "2026-01-02T00:00:00.000Z", status_since: "2026-01-01T00:00:00.000Z", created_by: "ada",
});

describe("rowToCard", () => {
  for (const owner of [null, "ada"]) {
    test(`keys in canonical order (owner ${owner ?? "absent"})`, () => {
      const card = rowToCard(row(owner), "ws");
      expect(JSON.stringify(card)).toBe(JSON.stringify(canonicalCard({ ...card })));
      expect(card.owner).toBe(owner ?? undefined);
      expect("owner" in card).toBe(owner !== null);
      expect(card.fields).toEqual({ priority: "high" });
      expect(card.tags).toEqual(["a"]);
    });
  }
});
