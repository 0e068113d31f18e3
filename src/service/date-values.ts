/**
 * Brings the date values an older build stored as written to the one stored form
 * (domain/dates.ts), once per database: the first open by a build with the rule walks
 * the date fields then loaded and records it (meta DATES_STORED_KEY). It is a change of
 * storage, not of the cards: the instant a value names is unchanged, so a card keeps its
 * version and updated_at and no event is written; the full-text index is rebuilt from the
 * cards when any changed. A field that becomes a date later keeps its values as written
 * (SPEC Versioning 5: reloading definitions never changes existing cards).
 */
import { DATE_FORM_VERSION, dateFormRecorded, fieldsWithStoredDates, hasDateFields } from "../domain/dates.ts";
import { CardsError } from "../domain/errors.ts";
import type { Service } from "./service.ts";

/** The meta key recording that the database's date values are in the stored form (dateFormRecorded). */
export const DATES_STORED_KEY = "dates_stored";

/** Cards written (at most) per transaction: other writers wait at most one page. */
const PAGE = 500;

/**
 * Brings every date value of the loaded types to the stored form, unless the database
 * records that it was. Returns how many cards changed.
 * @throws `unavailable` when it cannot write (read-only, busy), before walking the cards
 *   when the file was opened read-only: the next open tries again
 */
export async function storeDatesInForm(svc: Service): Promise<number> {
  if (dateFormRecorded(svc.store.readMeta(DATES_STORED_KEY))) return 0;
  // nothing can be written: a walk of every card, on every call, would change nothing (the
  // next open that can write brings them in line)
  if (svc.store.readOnly()) throw new CardsError("unavailable", "the workspace was opened read-only: its date values stay as stored");
  const types = new Map([...svc.defs.cardTypes.values()].filter(hasDateFields).map((t) => [t.id, t]));
  // every card there is now, by a key no write moves (a walk by updated_at skipped a card
  // written meanwhile), in one statement done before any write: a card created later was
  // stored in the form by its write
  const due: string[] = [];
  if (types.size) {
    for (const card of svc.store.iterateCards()) {
      const type = types.get(card.type_id);
      if (type && fieldsWithStoredDates(type, card.fields) !== undefined) due.push(card.id);
    }
  }
  let changed = 0;
  for (let i = 0; i < due.length; i += PAGE) {
    const ids = due.slice(i, i + PAGE);
    changed += await svc.store.write((tx) => {
      let n = 0;
      // read again under the lock: a write since the walk is not undone
      for (const id of ids) {
        const card = tx.getCard(id);
        const type = card ? types.get(card.type_id) : undefined;
        const fields = card && type ? fieldsWithStoredDates(type, card.fields) : undefined;
        if (card && fields && tx.updateCard({ ...card, fields }, card.version)) n++;
      }
      if (n) tx.markSearchStale();
      return n;
    });
  }
  await svc.store.write((tx) => tx.setMeta(DATES_STORED_KEY, String(DATE_FORM_VERSION)));
  return changed;
}
