/**
 * `defineCommand` without loading citty at run time: citty's module imports node:util
 * (about 1 ms on every call, perf-baselines.md §1). Commands keep citty's types; citty
 * itself is loaded only to render help.
 */
import type { ArgsDef, CommandDef } from "citty";

export function defineCommand<const T extends ArgsDef = ArgsDef>(def: CommandDef<T>): CommandDef<T> {
  return def;
}
