/**
 * Icon aliases of card types and option themes (the server's ICON_ALIASES) drawn as text
 * symbols that common system fonts carry (DejaVu, Segoe, Apple symbols); U+FE0E asks for
 * the text presentation so no emoji font is needed.
 */
const GLYPHS: Record<string, string> = {
  task: "☑", bug: "☣", review: "⚖", doc: "✎", check: "✓", flag: "⚑", star: "★", bolt: "ϟ",
  clock: "◷", user: "☺", users: "⚇", robot: "⌬", link: "⚭", lock: "⊠", unlock: "⊡", bell: "♪",
  bookmark: "⚲", calendar: "▦", chat: "✉", code: "⌘", cog: "⚙", database: "⛁", eye: "◉", fire: "♨",
  folder: "▭", gift: "⊕", globe: "◍", heart: "♥", inbox: "⊔", key: "⚷", lightbulb: "☀", list: "☰",
  mail: "✉", package: "⊞", pin: "⚲", question: "?", rocket: "➶", search: "⌕", shield: "⛨",
  sparkles: "✦", tag: "⌗", target: "◎", terminal: "▸", tool: "⚒", trash: "⌫", warning: "⚠",
  archive: "▤", branch: "⑂", chart: "▥", beaker: "⚗",
};

export function glyph(alias: string | undefined): string {
  if (!alias) return "";
  const g = GLYPHS[alias];
  return g ? `${g}\uFE0E` : "•";
}

export function icon(alias: string | undefined, label?: string): HTMLSpanElement {
  const span = document.createElement("span");
  span.className = "icon";
  span.textContent = glyph(alias);
  if (label) span.title = label;
  span.setAttribute("aria-hidden", "true");
  return span;
}
