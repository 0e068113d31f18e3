/** "Did you mean" for a name a caller got nearly right (a typo, case, `_` for `-`, a plural s). */
import { distance } from "fastest-levenshtein";

const norm = (x: string): string => x.toLowerCase().replace(/[_\s]/g, "-").replace(/s$/, "");

/** The option `name` most likely meant, or undefined when none is close. */
export function closest(name: string, options: readonly string[]): string | undefined {
  // a name far longer than any option is no typo of one (and a 4 MiB key would cost seconds)
  if (name.length > 100) return undefined;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const o of options) {
    if (o === name) return undefined;
    const score = norm(o) === norm(name) ? 0 : distance(o.toLowerCase(), name.toLowerCase());
    // one edit in three at most: "tag_polcy" is tag_policy, "id" is not "icon"
    if (score < bestScore && score <= Math.max(1, Math.floor(o.length / 3))) {
      best = o;
      bestScore = score;
    }
  }
  return best;
}

/** ` (did you mean X?)` (with `suffix` after the name), or "" when nothing is close. */
export function didYouMean(name: string, options: readonly string[], suffix = ""): string {
  const hit = closest(name, options);
  return hit === undefined ? "" : ` (did you mean ${hit}${suffix}?)`;
}
