/**
 * Text as the full-text index holds it and a query is read (store/sqlite/search-index.ts,
 * rows.ts toFtsQuery; docs/filters.md "Search"):
 *
 * - Unicode's composed form (NFC): text typed or pasted decomposed (macOS file names, some
 *   input methods) spells "é" as "e" and a combining accent, and Hangul as separate jamo;
 *   without one form a decomposed query missed a composed title and the other way round.
 * - Marks that do not change the word are dropped: emoji variation selectors and the
 *   keycap (`❤` finds "❤️"; as word characters they kept the two apart), Arabic and Hebrew
 *   vowel points (`كتب` finds "كَتَبَ"), Greek accents (`οδος` finds "Οδός"), and Russian ё is
 *   read as е (`елка` finds "Ёлка"). Other marks are part of their word (a vowel sign: `हो`
 *   does not find "हिन्दी").
 * - Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer,
 *   Burmese) have each character, with its marks, set apart as a word of its own: the
 *   tokenizer made a whole run one word, so `ログイン` missed "ユーザーがログインできない".
 *   A query reads such a run as a phrase: those characters in a row (searchPhrases).
 */
export function searchText(s: string): string {
  // (Russian writes ё as е more often than not: one letter to search)
  let t = s.normalize("NFC").replace(DROPPED_MARKS, "").replace(/ё/g, "е").replace(/Ё/g, "Е");
  // Greek accents are composed into their letter: taken apart, dropped, composed again
  if (GREEK_ACCENTED.test(t)) t = t.normalize("NFD").replace(GREEK_MARKS, "").normalize("NFC");
  // what separates words is decided here, not by SQLite's older Unicode tables: a skin tone,
  // a bidi isolate or a newer currency sign was part of a word there and a separator here,
  // so "👍🏽 deployed" missed "deployed 👍🏽"
  return t.replace(NOT_WORD, " ").replace(UNSPACED_CHAR, " $& ");
}

/**
 * The words of a query as the index reads them, each a list of terms that must stand in a
 * row (one term for a word in a spaced script, one per character of a run of Chinese).
 * Only what the index keeps counts: a word of marks or underscores alone is none.
 */
export function searchPhrases(q: string): string[][] {
  const words = q.normalize("NFC").match(/[\p{L}\p{M}\p{N}\p{Co}\p{So}_]+/gu) ?? [];
  // a term of accents alone is none: the index drops them, and an empty phrase matched every
  // card (other marks are kept: a vowel sign without its letter is in no word)
  const terms = (w: string) => (searchText(w).match(/[\p{L}\p{M}\p{N}\p{Co}\p{So}]+/gu) ?? []).filter((t) => t.replace(ACCENTS, "") !== "");
  return words.map(terms).filter((phrase) => phrase.length > 0);
}

/** Terms a query's words come to (searchPhrases): what a query's cost grows with. */
export function searchTermCount(q: string): number {
  return searchPhrases(q).reduce((n, terms) => n + terms.length, 0);
}

/** Variation selectors, the keycap, and the nonspacing marks of Hebrew and Arabic (their vowel points). */
const DROPPED_MARKS = /[\uFE00-\uFE0F\u20E3\u{E0100}-\u{E01EF}\u0591-\u05BD\u05BF\u05C1\u05C2\u05C4\u05C5\u05C7\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06DC\u06DF-\u06E4\u06E7\u06E8\u06EA-\u06ED\u08D3-\u08E1\u08E3-\u08FF]/gu;
/** Combining diacritical marks: the tokenizer's remove_diacritics drops them from a word. */
const ACCENTS = /[\u0300-\u036F\u1AB0-\u1AFF\u1DC0-\u1DFF\u20D0-\u20FF\uFE20-\uFE2F]/gu;
const GREEK_ACCENTED = /[\u0386-\u03CE\u1F00-\u1FFE]/u;
const GREEK_MARKS = /(?<=\p{sc=Greek}\p{Mn}*)\p{Mn}/gu;
/** A letter or digit of those scripts with its marks (a mark those scripts share with Latin, U+0303, stays with its Latin letter). */
const UNSPACED_CHAR = /(?=[\p{L}\p{N}])[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]\p{M}*/gu;
/** Anything that is no letter, mark, digit, private-use character or symbol: a separator. */
const NOT_WORD = /[^\p{L}\p{M}\p{N}\p{Co}\p{So}]/gu;
