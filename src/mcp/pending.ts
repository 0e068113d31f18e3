/**
 * Service operations that land in src/service/index.ts separately (upgrade, artifacts).
 * Looked up by name at call time so this surface builds before and after they exist;
 * a missing one answers `unavailable`. Replace with direct imports once all are exported.
 */
import * as service from "../service/index.ts";
import { CardsError } from "../domain/errors.ts";
import type { Card } from "../domain/types.ts";
import type { OpContext, Service } from "../service/index.ts";

export interface UpgradeResult {
  card: Card;
  report: { from: number; to: number; defaults_applied: Record<string, unknown>; fields_dropped: string[] };
}

type UpgradeFn = (svc: Service, id: string, input: { target_version?: number; dry_run?: boolean }, ctx: OpContext) => Promise<UpgradeResult>;
type AttachFn = (svc: Service, id: string, field: string, body: Uint8Array, contentType: string | undefined, ctx: OpContext) => Promise<Card>;
type ReadFn = (svc: Service, uri: string) => Promise<{ bytes: Uint8Array; mime: string; size: number }>;

function lookup<T>(name: string): T {
  const fn = (service as unknown as Record<string, unknown>)[name];
  if (typeof fn !== "function") throw new CardsError("unavailable", `${name} is not available in this build`);
  return fn as T;
}

export const upgradeSchema: UpgradeFn = (...a) => lookup<UpgradeFn>("upgradeSchema")(...a);
export const attachArtifact: AttachFn = (...a) => lookup<AttachFn>("attachArtifact")(...a);
export const readArtifact: ReadFn = (...a) => lookup<ReadFn>("readArtifact")(...a);
