/**
 * The `cards` executable: a citty root whose subcommands load lazily, run by our own
 * runner (JSON on stdout, error envelope on stderr, exit codes of docs/cli.md).
 */
import { defineCommand } from "./cli/define.ts";
import { runCli } from "./cli/runner.ts";

declare const CARDS_VERSION: string | undefined;
const VERSION = typeof CARDS_VERSION === "string" ? CARDS_VERSION : "0.1.0-dev";

const simple = () => import("./cli/commands/simple.ts");

const root = defineCommand({
  meta: { name: "cards", version: VERSION, description: "Typed work cards for agents and people: claim, take-next, events" },
  subCommands: {
    init: () => import("./cli/commands/init.ts").then((m) => m.default),
    check: () => import("./cli/commands/check.ts").then((m) => m.default),
    serve: () => import("./http/command.ts").then((m) => m.default),
    mcp: () => import("./mcp/command.ts").then((m) => m.default),
    prime: () => import("./cli/commands/prime.ts").then((m) => m.default),
    workspace: () => simple().then((m) => m.workspace),
    health: () => simple().then((m) => m.health),
    boards: () => simple().then((m) => m.boards),
    users: () => simple().then((m) => m.users),
    cards: () => import("./cli/commands/cards.ts").then((m) => m.default),
    events: () => simple().then((m) => m.events),
    breaches: () => simple().then((m) => m.breaches),
    api: () => simple().then((m) => m.api),
    ext: () => import("./cli/commands/ext.ts").then((m) => m.default),
    artifacts: () => import("./cli/commands/artifacts.ts").then((m) => m.default),
    dump: () => import("./cli/commands/portability.ts").then((m) => m.dump),
    restore: () => import("./cli/commands/portability.ts").then((m) => m.restore),
    backup: () => import("./cli/commands/portability.ts").then((m) => m.backup),
  },
});

const code = await runCli(root, process.argv.slice(2), VERSION);
if (code !== 0) process.exitCode = code;
