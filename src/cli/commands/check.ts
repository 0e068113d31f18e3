/** `cards check [--dir D]`: validates the definitions and lists every problem. */
import { defineCommand } from "../define.ts";
import { CardsError, isCardsError } from "../../domain/errors.ts";
import { loadDefinitions, formatProblems } from "../../definitions/load.ts";
import { assertSchemaFloor, definitionNotices, findRoot } from "../../service/index.ts";
import type { CliGlobals } from "../client.ts";

export default defineCommand({
  meta: { name: "check", description: "Validate the workspace definitions and the stored data; lists every problem and exits non-zero. When they load, notices name the cards they no longer fit (exit 0)" },
  run: async ({ data }) => {
    const g = data as CliGlobals;
    const root = await findRoot(g.dir, g.cwd, g.env);
    let loaded = false;
    try {
      const defs = await loadDefinitions(root);
      loaded = true;
      // the rules that need the cards too (schema versions only go up), when there are any
      const { withExistingStore } = await import("../../platform/open.ts");
      // and the cards the set no longer fits (they load: reloading never changes cards)
      const notices = withExistingStore(root, (r) => {
        // the stored data first: a damaged file reads wrong or not at all (before: "ok")
        const damage = r.damage();
        if (damage.length) {
          for (const d of damage) console.error(`damaged: ${d}`);
          // the index alone is derived data: it is made again, not restored
          const indexOnly = damage.every((d) => d.startsWith("the full-text index"));
          const message = indexOnly
            ? "the full-text index is damaged (above); cards and events are not affected"
            : `the workspace database is damaged: ${damage[0]}${damage.length > 1 ? ` (and ${damage.length - 1} more, above)` : ""}`;
          throw new CardsError("unavailable", message, {
            hint: indexOnly
              ? "the full-text index is made again from the cards: delete .cards/search.db with its -wal and -shm files while no process uses the workspace"
              : "stop the processes using it and restore from a backup or dump (docs/backup.md)",
          });
        }
        assertSchemaFloor(r, defs);
        return definitionNotices(r, defs);
      }) ?? definitionNotices(undefined, defs);
      for (const n of notices) console.error(`notice: ${n.message}${n.list ? ` (list them: ${n.list})` : ""}`);
      // a set that checks out is announced, as a one-shot call would: running servers
      // (their hooks and services) load it within a second. Best effort: the check stands
      const { openAndAnnounce } = await import("../../platform/open.ts");
      await openAndAnnounce(root, g.env).catch(() => undefined);
      return {
        ok: true, root, workspace_id: defs.workspace.id,
        card_types: [...defs.cardTypes.keys()], boards: [...defs.boards.keys()], views: [...defs.views.keys()],
        extensions: defs.extensions.map((e) => e.id),
        notices,
      };
    } catch (e) {
      if (!isCardsError(e) || !e.extra.problems) throw e;
      console.error(formatProblems(e.extra.problems));
      // the rules that read the cards need a set that loads: say they are still to come
      const { hasDatabase } = await import("../../platform/open.ts");
      const later = !loaded && hasDatabase(root);
      throw new CardsError(e.code, e.message, {
        ...e.extra,
        hint: later
          ? "fix these, then run `cards check` again: the checks against the workspace's cards (schema versions, card types and columns in use, the workspace id) run once the files load"
          : "fix these, then run `cards check` again",
      });
    }
  },
});
