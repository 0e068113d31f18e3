/** The user registry: declared users are registered at load; POST /users adds more. */
import { CardsError } from "../domain/errors.ts";
import type { User } from "../domain/types.ts";
import { RegisterUserBody, parseShape } from "./shapes.ts";
import type { OpContext, Service } from "./service.ts";

/** Registers a user. The same user again is a no-op (`created: false`); other values for a known id are 409. */
export async function registerUser(svc: Service, input: unknown, ctx: OpContext): Promise<{ user: User; created: boolean }> {
  const body = parseShape(RegisterUserBody, input, "register user");
  return svc.mutate(ctx, (w) => {
    const cur = w.tx.getUser(body.id);
    if (cur) {
      if (cur.kind === body.kind && (cur.display_name ?? undefined) === body.display_name) return { user: cur, created: false };
      throw new CardsError("user_exists", `user ${body.id} is already registered with other values`, {
        field: "id", value: body.id, hint: "pick another id; registered users cannot be changed",
      });
    }
    const user: User = { id: body.id, ...(body.display_name ? { display_name: body.display_name } : {}), kind: body.kind, created_at: w.now };
    w.tx.upsertUser(user);
    return { user, created: true };
  });
}


/** Whether `id` is a registered user (declared in workspace.json or added with POST /users). */
export function isRegisteredUser(svc: Service, id: string): boolean {
  return svc.store.getUser(id) !== null;
}
