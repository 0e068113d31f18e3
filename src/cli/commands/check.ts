/** `cards check [--dir D]`: validates the definitions and lists every problem. */
import { defineCommand } from "../define.ts";
import { isCardsError } from "../../domain/errors.ts";
import { loadDefinitions, formatProblems } from "../../definitions/load.ts";
import { assertSchemaFloor, findRoot } from "../../service/index.ts";
import type { CliGlobals } from "../client.ts";

export default defineCommand({
  meta: { name: "check", description: "Validate the workspace definitions; lists every problem and exits non-zero" },
  run: async ({ data }) => {
    const g = data as CliGlobals;
    const root = await findRoot(g.dir, g.cwd, g.env);
    try {
      const defs = await loadDefinitions(root);
      // the rules that need the cards too (schema versions only go up), when there are any
      const { withExistingStore } = await import("../../platform/open.ts");
      withExistingStore(root, (r) => assertSchemaFloor(r, defs));
      return {
        ok: true, root, workspace_id: defs.workspace.id,
        card_types: [...defs.cardTypes.keys()], boards: [...defs.boards.keys()], views: [...defs.views.keys()],
        extensions: defs.extensions.map((e) => e.id),
      };
    } catch (e) {
      if (isCardsError(e) && e.extra.problems) console.error(formatProblems(e.extra.problems));
      throw e;
    }
  },
});
