/**
 * Brings stored date field values to the one stored form (domain/dates.ts): values
 * written before cards stored dates so, and values of a field that became a date. Runs
 * when an open or a reload meets a set whose date fields differ from those the database
 * was last brought in line with (meta DATES_STORED_KEY). The instant a value names is
 * unchanged, so a card keeps its version and updated_at and no event is written; the
 * full-text index is rebuilt from the cards when any changed.
 */
import { dateFieldsStamp, fieldsWithStoredDates, hasDateFields } from "../domain/dates.ts";
import type { Service } from "./service.ts";

/** The meta key naming the date fields whose values are in the stored form (dateFieldsStamp). */
export const DATES_STORED_KEY = "dates_stored";

/** Cards read (and written, at most) per transaction: other writers wait at most one page. */
const PAGE = 500;

/**
 * Brings every date value of the loaded types to the stored form, unless the database
 * records that it is. Returns how many cards changed.
 * @throws the store's error when it cannot write (read-only, busy): the next open tries again
 */
export async function storeDatesInForm(svc: Service): Promise<number> {
  const stamp = dateFieldsStamp(svc.defs.cardTypes.values());
  if (svc.store.readMeta(DATES_STORED_KEY) === stamp) return 0;
  let changed = 0;
  for (const type of svc.defs.cardTypes.values()) {
    if (!hasDateFields(type)) continue;
    // the default order, (updated_at, id) descending, which this pass does not move
    for (let after: { updated_at: string; id: string } | undefined; ;) {
      const page = svc.store.listCards({ typeIds: [type.id], limit: PAGE, ...(after ? { after } : {}) }).items;
      const due = page.filter((c) => fieldsWithStoredDates(type, c.fields) !== undefined).map((c) => c.id);
      if (due.length) {
        changed += await svc.store.write((tx) => {
          let n = 0;
          // read again under the lock: a write since the page was read is not undone
          for (const id of due) {
            const card = tx.getCard(id);
            const fields = card && card.type_id === type.id ? fieldsWithStoredDates(type, card.fields) : undefined;
            if (card && fields && tx.updateCard({ ...card, fields }, card.version)) n++;
          }
          if (n) tx.markSearchStale();
          return n;
        });
      }
      const last = page[page.length - 1];
      if (page.length < PAGE || !last) break;
      after = { updated_at: last.updated_at, id: last.id };
    }
  }
  await svc.store.write((tx) => tx.setMeta(DATES_STORED_KEY, stamp));
  return changed;
}
