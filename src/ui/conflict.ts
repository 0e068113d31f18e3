/**
 * A version conflict told to a person: "Someone (agent-1) changed this card meanwhile",
 * naming the actor of the card's latest history entry, instead of the API's advice to
 * re-read the card and retry with its current version.
 */
import { history } from "./api.ts";
import type { Card } from "./types.ts";

export const CONFLICT_TEXT = "Someone changed this card meanwhile: try again";

/** Who made the card's latest change ("" when it cannot be told). */
export async function conflictMessage(card: Card): Promise<{ who: string; text: string }> {
  let who = "";
  try {
    const items = (await history(card.id)).items;
    // a full page (500) may not reach the latest entry: then say "Someone"
    if (items.length < 500) who = items.at(-1)?.actor ?? "";
  } catch {
    // the history is only a nicety here: say "Someone"
  }
  return { who, text: who ? `Someone (${who}) changed this card meanwhile: try again` : CONFLICT_TEXT };
}
