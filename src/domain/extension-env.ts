/**
 * The variables cards sets in an extension process's environment over the extension's
 * declared `env` (DECISIONS.md): one list, read where the processes are started
 * (src/extensions, which refuses any other) and by `cards check`, whose notice names a
 * declared key that would be replaced. `always`: every process of the kind; `when_given`:
 * only when the caller has a value (a `run` gets CARDS_URL when the caller has one, and
 * CARDS_ACTOR with --actor), so declaring it is a default, not a mistake.
 */
import type { ExtensionDef } from "./types.ts";

export const SUPERVISOR_VAR = "CARDS_SUPERVISOR";

export const CARDS_ENV: Record<ExtensionDef["kind"], { always: readonly string[]; when_given: readonly string[] }> = {
  hook: { always: ["CARDS_URL", "CARDS_WORKSPACE", "CARDS_ACTOR", "CARDS_EVENT_ID", "CARDS_EVENT_TYPE", SUPERVISOR_VAR], when_given: [] },
  service: { always: ["CARDS_URL", "CARDS_WORKSPACE", SUPERVISOR_VAR], when_given: [] },
  run: { always: ["CARDS_WORKSPACE"], when_given: ["CARDS_URL", "CARDS_ACTOR"] },
};
