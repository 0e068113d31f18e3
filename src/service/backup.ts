/** `cards backup --out F`: a consistent online copy of the database while writers run. */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { CardsError } from "../domain/errors.ts";
import type { Service } from "./service.ts";

export function backupWorkspace(svc: Service, out: string): { out: string; bytes: number; cards: number } {
  const path = resolve(out);
  if (existsSync(path)) {
    throw new CardsError("usage", `${path} already exists; a backup never overwrites a file`, { field: "--out", hint: "pick a new file name" });
  }
  let copied: { cards: number };
  try {
    copied = svc.store.backupTo(path);
  } catch (e) {
    if ((e as { code?: string }).code === "EEXIST") throw new CardsError("usage", `${path} already exists; a backup never overwrites a file`, { field: "--out", hint: "pick a new file name" });
    throw new CardsError("unavailable", `cannot write the backup to ${path}: ${(e as Error).message}`, { hint: "check the directory exists, is writable and has space (nothing was written)" });
  }
  return { out: path, bytes: statSync(path).size, cards: copied.cards };
}
