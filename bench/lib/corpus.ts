// Deterministic, ticket-like text for seeding (adapted from ../shared/bench/lib/corpus.ts, the
// corpus behind the floors in research/perf-baselines.md, so search hit rates match).
export function rng(seed = 42) {
  // mulberry32
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!,
  };
}
export type Rng = ReturnType<typeof rng>;

const VERBS = ["Fix", "Add", "Refactor", "Remove", "Migrate", "Document", "Investigate", "Speed up", "Harden", "Test", "Rename", "Split", "Cache", "Validate", "Retry", "Log", "Paginate", "Deprecate", "Upgrade", "Instrument"] as const;
const NOUNS = ["login redirect", "session cookie", "rate limiter", "payment webhook", "search index", "card list endpoint", "event stream", "CSV export", "user avatar upload", "schema migration", "retry policy", "feature flag", "audit log", "OAuth callback", "billing invoice", "notification email", "dark mode toggle", "board filter", "WIP limit check", "artifact store", "JSON schema", "idempotency key", "cursor pagination", "SSE reconnect", "dependency graph", "take-next queue", "comment thread", "markdown renderer", "timezone handling", "CLI help text", "config loader", "health check", "metrics exporter", "backup job", "TLS certificate", "database vacuum", "build pipeline", "docker image", "flaky test", "memory leak"] as const;
const QUALS = ["on Safari", "under load", "for new users", "after restart", "in the admin panel", "when offline", "behind the proxy", "for archived cards", "in embedded mode", "on the staging cluster", "with empty input", "for large workspaces", "during deploys", "in CI", "for non-ASCII titles"] as const;
const WORDS = ("the a an to of in for on with when after before during because so that this it we they users agent agents server client request response error timeout retry queue card cards board column status owner version conflict transaction database index query latency throughput cache memory disk file path config flag test build deploy release migration schema field value event stream cursor page limit sort filter search token header body json endpoint handler route middleware worker process thread lock commit rollback snapshot backup restore export import parse validate serialize encode decode compress upload download render template style layout button modal dialog form input select option checkbox tooltip icon theme color font spacing mobile desktop browser safari chrome firefox linux macos windows docker kubernetes nginx postgres sqlite redis kafka webhook oauth session cookie password email notification invoice payment billing subscription customer account profile avatar settings permission role admin audit log metric trace alert dashboard report chart graph regression flaky slow fast broken fixed missing duplicate stale invalid unexpected intermittent consistently sometimes always never").split(" ");

export function title(r: Rng): string {
  return `${r.pick(VERBS)} ${r.pick(NOUNS)} ${r.pick(QUALS)}`;
}

function sentence(r: Rng): string {
  const n = 8 + r.int(14);
  const ws: string[] = [];
  for (let i = 0; i < n; i++) ws.push(r.pick(WORDS));
  ws[0] = ws[0]!.charAt(0).toUpperCase() + ws[0]!.slice(1);
  return ws.join(" ") + ".";
}

const MODULES = ["auth", "billing", "cards", "boards", "events", "search", "cli", "server", "store", "ui", "export", "hooks", "migrations", "artifacts", "notify"] as const;
const FILES = ["session", "router", "handler", "schema", "index", "queue", "retry", "cursor", "parser", "render", "config", "client", "worker", "cache", "lock"] as const;

/** A reference line with rarer tokens (file paths, error codes) so full-text search
 *  sees a Zipf-like mix of very common and rare terms, as in real tickets. */
function reference(r: Rng): string {
  return `Seen in \`src/${r.pick(MODULES)}/${r.pick(FILES)}.ts\` with error E${1000 + r.int(9000)}.`;
}

/** Markdown-ish body: 1-3 paragraphs of 2-5 sentences (~300-1500 chars), often
 *  followed by a reference line. */
export function body(r: Rng): string {
  const paras: string[] = [];
  const np = 1 + r.int(3);
  for (let p = 0; p < np; p++) {
    const ns = 2 + r.int(4);
    const ss: string[] = [];
    for (let s = 0; s < ns; s++) ss.push(sentence(r));
    paras.push(ss.join(" "));
  }
  if (r.next() < 0.6) paras.push(reference(r));
  return paras.join("\n\n");
}

export const STATUSES = ["backlog", "todo", "doing", "review", "done"] as const;
export const TAGS = ["bug", "feature", "perf", "docs", "security", "ux", "infra", "api", "cli", "tech-debt"] as const;

export function tags(r: Rng): string[] {
  const n = r.int(3);
  const s = new Set<string>();
  for (let i = 0; i < n; i++) s.add(r.pick(TAGS));
  return [...s];
}
