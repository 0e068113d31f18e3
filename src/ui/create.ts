/**
 * The "New card" dialog: a form generated from the chosen card type's fields. Esc closes
 * it only while nothing was typed; Cancel and × always do.
 */
import { api } from "./api.ts";
import { renderLanes, setFocusCard, cardElement } from "./board.ts";
import { refreshCards } from "./data.ts";
import { h, shortId } from "./dom.ts";
import { isDirty, markClean } from "./dirty.ts";
import { clearErrors, fieldLabel, fieldRow, readyToSend, showFormError, tagControl, type FieldInput } from "./forms.ts";
import { allowedColumns, cardType, columnName, state } from "./state.ts";
import * as toast from "./toast.ts";
import type { Card } from "./types.ts";

export function openCreate(initialStatus?: string): void {
  const types = state.board.card_type_ids.map((id) => cardType(id)).filter((t) => t !== undefined);
  if (!types.length) return;
  const typeSel = h("select", { id: "new-type", name: "type_id" }, types.map((t) => h("option", { value: t.id }, t.name)));
  const title = h("input", { id: "new-title", name: "title", type: "text", required: true, autocomplete: "off", maxlength: 1024 });
  const statusSel = h("select", { id: "new-status", name: "status" });
  const tags = tagControl("new-tags", []);
  const fieldsBox = h("div", { class: "form-fields" });
  let inputs: FieldInput[] = [];

  const buildFields = () => {
    const t = cardType(typeSel.value)!;
    const cols = allowedColumns(t.id);
    const keep = statusSel.value || initialStatus;
    statusSel.replaceChildren(...cols.map((c) => h("option", { value: c }, columnName(c))));
    if (keep && cols.includes(keep)) statusSel.value = keep;
    inputs = t.fields.filter((f) => f.display !== "hidden" || f.required)
      // a single choice with a default has no blank: the server would put the default back
      .map((f) => fieldRow(f, f.default, { blank: f.default === undefined })).filter((x): x is FieldInput => x !== null);
    fieldsBox.replaceChildren(...inputs.map((i) => i.el));
  };
  typeSel.addEventListener("change", buildFields);

  const submit = h("button", { type: "submit", class: "primary" }, "Create card");
  const form = h("form", { class: "card-form", method: "dialog", novalidate: true },
    h("header", { class: "dialog-head" }, h("h2", {}, `New card on ${state.board.name}`),
      h("button", { type: "button", class: "icon-button", "aria-label": "Close", onclick: () => dlg.close() }, "×")),
    types.length > 1 ? row("new-type", "Type", typeSel) : null,
    row("new-title", "Title", title, true),
    row("new-status", "Status", statusSel),
    row("new-tags", "Tags", tags.el),
    fieldsBox,
    h("div", { class: "form-error", role: "alert" }),
    h("footer", { class: "dialog-actions" },
      h("button", { type: "button", onclick: () => dlg.close() }, "Cancel"), submit));
  const dlg = h("dialog", { class: "dialog create-dialog", "aria-label": "New card" }, form);
  dlg.addEventListener("close", () => dlg.remove());
  // Esc asks the dialog to cancel: refused while the form holds typed input. The keydown is
  // stopped too, since the browser lets a page refuse `cancel` only once per user activation.
  const keep = (ev: Event) => {
    if (!isDirty(form)) return;
    ev.preventDefault();
    ev.stopPropagation();
  };
  dlg.addEventListener("keydown", (ev) => { if (ev.key === "Escape") keep(ev); });
  dlg.addEventListener("cancel", keep);
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearErrors(form);
    if (!(await readyToSend(form, inputs, submit))) return;
    const fields: Record<string, unknown> = {};
    for (const i of inputs) {
      const v = i.read();
      if (v !== undefined) fields[i.def.id] = v;
      // a list emptied on purpose stays empty ([] is no value; an absent one takes the default)
      else if (Array.isArray(i.def.default) && i.changed()) fields[i.def.id] = [];
    }
    submit.disabled = true;
    try {
      const card = await api<Card>("POST", "/cards", {
        type_id: typeSel.value, title: title.value, status: statusSel.value, tags: tags.read() ?? [], fields,
      });
      dlg.close();
      toast.info(`Created ${shortId(card.id)} “${card.title}”`);
      setFocusCard(card.id);
      renderLanes(await refreshCards([card.id]));
      cardElement(card.id)?.focus();
    } catch (e) {
      showFormError(form, e);
    } finally {
      submit.disabled = false;
    }
  });
  buildFields();
  markClean(form);
  document.body.append(dlg);
  dlg.showModal();
  title.focus();
}

function row(id: string, text: string, control: HTMLElement, required = false): HTMLElement {
  return h("div", { class: "form-field", "data-field": id === "new-type" ? "type_id" : id.replace(/^new-/, "") },
    fieldLabel(id, control, text, required),
    control, h("div", { class: "field-error", role: "alert" }));
}
