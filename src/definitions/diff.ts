/** Which boards a change of definitions touches (pure; reload and open announce by it). */
import type { Definitions } from "../domain/types.ts";

/** Boards whose own file changed, that show a changed card type, or all when workspace.json changed. */
export function affectedBoards(old: Definitions, next: Definitions): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  const ids = new Set([...old.boards.keys(), ...next.boards.keys()]);
  if (!same(old.workspace, next.workspace)) return [...ids].sort();
  const changedTypes = new Set([...old.cardTypes.keys(), ...next.cardTypes.keys()].filter((t) => !same(old.cardTypes.get(t), next.cardTypes.get(t))));
  return [...ids].filter((id) => {
    const a = old.boards.get(id);
    const b = next.boards.get(id);
    return !same(a, b) || [...(a?.card_type_ids ?? []), ...(b?.card_type_ids ?? [])].some((t) => changedTypes.has(t));
  }).sort();
}
