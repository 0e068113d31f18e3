/** Cards for the UI tests and screenshots, written through the public HTTP API. */

export async function call(base: string, method: string, path: string, body?: unknown, actor = "ada"): Promise<any> {
  const res = await fetch(`${base}/v1${path}`, {
    method,
    headers: { "content-type": "application/json", "x-service-actor": actor },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

export interface Seeded { [name: string]: any }

const DESCRIPTION = `Agents call \`take-next\` in a tight loop; a **token bucket** per actor keeps one
runaway agent from starving the others.

- [x] pick the limits (100/min, burst 20)
- [ ] return \`429\` with a retry hint
- [ ] document it in the [API guide](https://example.com/docs/api)

> Keep the limiter in memory: one instance serves one workspace.`;

/** A small, varied board: every lane used, an owner or two, a blocked card, review over its WIP limit. */
export async function seedDemo(base: string): Promise<Seeded> {
  const create = (body: Record<string, unknown>, actor = "ada") => call(base, "POST", "/cards", body, actor);
  const s: Seeded = {};
  s.rate = await create({ type_id: "task", title: "Add rate limiting to the public API", status: "doing", tags: ["backend", "security"],
    fields: { priority: "high", components: ["api"], description: DESCRIPTION, branch: "feat/rate-limit", estimate_hours: 6, due: "2027-01-15T17:00:00.000Z" } });
  s.guide = await create({ type_id: "task", title: "Write the quick-start guide", status: "backlog", tags: ["docs"], fields: { priority: "low", components: ["docs"] } });
  s.flaky = await create({ type_id: "task", title: "Flaky test: take-next race on CI", status: "todo", tags: ["flaky", "backend"], fields: { priority: "urgent", components: ["store"] } });
  s.cache = await create({ type_id: "task", title: "Cache validated definitions", status: "todo", fields: { priority: "normal", components: ["store"] } });
  s.login = await create({ type_id: "bug", title: "Login redirect loops after session expiry", status: "todo", tags: ["frontend"],
    fields: { severity: "major", steps: "1. Sign in\n2. Wait for expiry\n3. Reload", areas: ["frontend"] } });
  s.keys = await create({ type_id: "task", title: "Keyboard navigation on the board", status: "doing", tags: ["frontend"], fields: { priority: "normal", components: ["ui"] } });
  s.sse = await create({ type_id: "task", title: "Resume the event stream after reconnect", status: "doing", fields: { priority: "high", components: ["api"] } }, "agent-1");
  s.review = await create({ type_id: "review", title: "Review: rate limiter design", status: "review", fields: { verdict: "pending", reviewers: ["ada"] } }, "agent-2");
  s.dump = await create({ type_id: "task", title: "Export the workspace as JSONL", status: "review", fields: { priority: "normal", components: ["cli"] } });
  s.crash = await create({ type_id: "bug", title: "Crash when a title holds an emoji", status: "review", tags: ["backend"],
    fields: { severity: "critical", steps: "Create a card titled with an emoji.", environment: "linux-x64 bun 1.4.5" } });
  s.ci = await create({ type_id: "task", title: "Set up the CI pipeline", status: "done", tags: ["infra"], fields: { priority: "low" } });
  s.filters = await create({ type_id: "task", title: "Document the filter grammar", status: "done", tags: ["docs"], fields: { priority: "normal", components: ["docs"] } });
  s.perf = await create({ type_id: "task", title: "Profile list queries on 100k cards", status: "backlog", tags: ["performance"], fields: { priority: "normal", components: ["store"] } });

  const own = async (name: string, owner: string) => {
    s[name] = await call(base, "PATCH", `/cards/${s[name].id}`, { version: s[name].version, owner });
  };
  await own("rate", "agent-1");
  await own("sse", "agent-2");
  await own("keys", "ada");
  await own("dump", "agent-2");
  await own("cache", "agent-1");

  let rate = await call(base, "GET", `/cards/${s.rate.id}`);
  rate = (await call(base, "POST", `/cards/${s.rate.id}/fields/evidence/append`, { version: rate.version, entry: { note: "Measured 1.2k req/s per agent in the soak test.", by: "agent-1", at: "2026-11-20T10:00:00.000Z" } }, "agent-1")).card;
  rate = (await call(base, "POST", `/cards/${s.rate.id}/fields/evidence/append`, { version: rate.version, entry: { note: "A bucket of 20 absorbs the startup burst.", by: "agent-1" } }, "agent-1")).card;
  await call(base, "POST", `/cards/${s.rate.id}/links`, { type_id: "depends-on", target: s.cache.id, note: "limits live in the cached definitions" });
  await call(base, "POST", `/cards/${s.review.id}/links`, { type_id: "sent-to", target: s.rate.id });
  await call(base, "POST", `/cards/${s.rate.id}/comments`, { body: "Picked the limits from last week's traffic. **Ready for review** once the 429 hint lands." }, "agent-1");
  await call(base, "POST", `/cards/${s.rate.id}/comments`, { body: "Looks good. Please keep the burst configurable." }, "ada");
  return s;
}

/** `n` tasks spread over the lanes, created `parallel` at a time. */
export async function seedMany(base: string, n: number, parallel = 8): Promise<void> {
  const statuses = ["backlog", "todo", "doing", "review", "done"];
  const prio = ["low", "normal", "high", "urgent"];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      await call(base, "POST", "/cards", {
        type_id: "task", title: `Generated task ${i + 1}`, status: statuses[i % statuses.length],
        tags: i % 3 ? ["backend"] : ["frontend", "docs"], fields: { priority: prio[i % prio.length], components: ["api"] },
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}
