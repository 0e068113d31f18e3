/** The flags that narrow which cards a read covers, shared by `cards cards list` and `cards boards counts`. */
import type { ArgsDef } from "citty";

export const narrowingArgs = {
  type: { type: "string", description: "card type id(s), comma-separated" },
  owner: { type: "string", description: "owner id (`me` = the actor)" },
  tag: { type: "string", description: "cards carrying this tag" },
  blocked: { type: "string", description: "true: only blocked cards; false: only unblocked" },
  "has-link": { type: "string", description: "cards with an outgoing link of this type" },
  "link-target": { type: "string", description: "cards linking to this card id (with --has-link: by a link of that type, e.g. the children of an epic)" },
  q: { type: "string", description: "full-text search; also matches a full or short id" },
} as const satisfies ArgsDef;

type Narrowing = { [K in keyof typeof narrowingArgs]?: string };

/** Those flags as the route's query parameters. */
export function narrowingQuery(args: Narrowing): Record<string, string | undefined> {
  return { type_id: args.type, owner: args.owner, tag: args.tag, blocked: args.blocked, has_link: args["has-link"], link_target: args["link-target"], q: args.q };
}
