/**
 * `cards events --follow`: live events as JSON Lines on stdout, one event per line, until
 * interrupted. Remote mode reads the server's SSE stream (GET /events/stream) and resumes
 * after the last id when the stream ends (a slow reader is dropped by the server, or the
 * server restarts). Embedded mode subscribes to the workspace's feed, which picks up
 * writes of every process within its polling interval (DECISIONS: within one second).
 * Durable events carry `id`; condition signals do not.
 */
import { actorHeader, callerActor, serverUrl, type CliGlobals } from "./client.ts";
import { CardsError, EXIT_CODE, toEnvelope } from "../domain/errors.ts";
import { stdoutFailure, writeAll } from "./write-all.ts";

/** How long remote --follow keeps reconnecting to a server it lost before exiting 7 (--reconnect-for). */
export const FOLLOW_RECONNECT_S = 60;

export interface FollowQuery {
  since?: string;
  types?: string;
  card_id?: string;
  board_id?: string;
  actor?: string;
  owner?: string;
}

/**
 * Writes one line, blocking while stdout is full: a reader that stops reading stops the
 * follower (embedded: the feed resumes from its cursor; remote: the server drops the
 * stream and the follower resumes after the last id), instead of lines piling up in memory.
 * A closed pipe ends the process quietly.
 */
function writeLine(line: string): void {
  try {
    writeAll(1, `${line}\n`);
  } catch (e) {
    const failure = stdoutFailure(e, "the events not written are still in the feed: resume with --since");
    if (failure) console.error(JSON.stringify(toEnvelope(failure)));
    process.exit(failure ? EXIT_CODE.unavailable : 0);
  }
}

export async function followEvents(g: CliGlobals, q: FollowQuery, reconnectForS = FOLLOW_RECONNECT_S): Promise<never> {
  const url = serverUrl(g);
  return url ? followRemote(url, g, q, reconnectForS) : followEmbedded(g, q);
}

async function followEmbedded(g: CliGlobals, q: FollowQuery): Promise<never> {
  const { openService } = await import("../platform/open.ts");
  const { eventMatcher, parseStreamFilter, replayEvents, STREAM_REPLAY_LIMIT } = await import("../service/index.ts");
  const { parseEventId } = await import("../domain/ids.ts");
  const svc = await openService({ dir: g.dir, cwd: g.cwd, env: g.env, mode: "embedded" });
  // before the first line is printed: a caller that stops the follower once it has read
  // one line (a signal right after it) ended it by the signal (exit 130), not with exit 0
  const stop = (): void => { svc.close(); process.exit(0); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const query: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) if (v !== undefined) query[k] = v;
  const f = parseStreamFilter(svc, query, undefined, svc.resolveActor(callerActor(g)));
  const matches = eventMatcher(svc, f);
  const print = (e: unknown): void => writeLine(JSON.stringify(e));
  // the feed publishes what comes after the newest event at subscription time; the replay
  // (at most 500 after --since, as the server's stream) runs synchronously up to there
  svc.subscribe((e) => { if (matches(e)) print(e); }, { types: f.types });
  const live = Math.max(svc.liveCursor, svc.store.historyThrough());
  // every event after --since, page by page (the server's stream stops at 500; here the
  // follower reads the log itself, so it has no reason to)
  for (let from = f.since; from !== undefined;) {
    const rows = replayEvents(svc, { ...f, since: from });
    from = rows.length >= STREAM_REPLAY_LIMIT ? rows.at(-1)!.id : undefined;
    for (const e of rows) {
      if ((parseEventId(e.id) ?? 0) > live) { from = undefined; break; }
      if (matches(e)) print(e);
    }
  }
  // the feed's polling timer does not hold the process (a one-shot call must exit): this does
  setInterval(() => {}, 1 << 30);
  return new Promise<never>(() => {});
}

/** A line for the person watching: stdout carries only the events. */
const notice = (text: string): void => { process.stderr.write(`cards: ${text}\n`); };

async function followRemote(baseUrl: string, g: CliGlobals, q: FollowQuery, reconnectForS: number): Promise<never> {
  const { createParser } = await import("eventsource-parser");
  // interrupted, it ends as the embedded follower does: exit 0, whatever it was doing
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => process.exit(0));
  const { apiBase, withoutPassword, timeoutSeconds, DEFAULT_TIMEOUT_S, excerpt, isEnvelope, notCards, redirected } = await import("./remote.ts");
  // as remote.ts: the same base URL rules, and a password never shown
  const url = apiBase(baseUrl);
  const base = withoutPassword(url);
  const firstWaitS = timeoutSeconds(g) ?? DEFAULT_TIMEOUT_S;
  let lastId = q.since;
  let connected = false;
  /** when the stream was lost (undefined while connected): a quiet feed and a dead server look alike on stdout */
  let lostAt: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(q)) if (v !== undefined && k !== "since") qs.set(k, v);
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (lastId) headers["last-event-id"] = lastId;
    const actor = callerActor(g);
    if (actor) headers["x-service-actor"] = actorHeader(actor);
    let res: Response;
    // a reconnect that gets no answer (a host gone, its packets dropped) gives up in time:
    // the deadline below is judged once per attempt
    // the first connection waits as long as any remote call (--timeout)
    const answer = new AbortController();
    const waitMs = connected ? Math.max(1000, Math.min(5000, reconnectForS * 1000)) : firstWaitS * 1000;
    const wait = setTimeout(() => answer.abort(new Error(`no answer within ${Math.round(waitMs / 1000)} s`)), waitMs);
    try {
      res = await fetch(`${url}/v1/events/stream${qs.size ? `?${qs}` : ""}`, { headers, signal: answer.signal, redirect: "manual" });
      clearTimeout(wait);
      // a proxy before a server that is down answers for it: lost, not refused
      if (connected && res.status >= 502 && res.status <= 504) {
        await res.body?.cancel();
        throw new Error(`${res.status} from ${base}`);
      }
    } catch (e) {
      clearTimeout(wait);
      if (!connected) {
        throw new CardsError("unavailable", `cannot reach ${base}: ${(e as Error).message}`, { hint: "check that `cards serve` is running and CARDS_URL / --url points at it" });
      }
      if (performance.now() - lostAt! > reconnectForS * 1000) {
        throw new CardsError("unavailable", `lost ${base} and could not reconnect for ${reconnectForS} s: ${(e as Error).message}`, {
          hint: `start \`cards serve\` again and resume with --since ${lastId ?? "(the last id you printed)"}; --reconnect-for sets how long to keep trying`,
        });
      }
      await sleep(Math.min(5000, 250 * 2 ** Math.min(attempt, 5)));
      continue;
    }
    if (!res.ok || !res.body) {
      const text = await res.text();
      if (res.status === 431 && !(res.headers.get("content-type") ?? "").includes("json")) {
        // Bun's HTTP parser answers before any route runs, as for every remote call (remote.ts)
        throw new CardsError("bad_request", `GET /v1/events/stream: ${base} refused the request's URL and headers as too long (431; at most 16 KiB)`, {
          hint: "shorten what goes in the query (--owner, --actor, --types); see docs/limits.md",
        });
      }
      const what = "GET /v1/events/stream";
      if (res.status >= 300 && res.status < 400) throw redirected(base, what, res.status, res.headers.get("location"));
      let env: unknown;
      try { env = JSON.parse(text); } catch { /* not an envelope */ }
      if (isEnvelope(env)) {
        const { envelopeError } = await import("./client.ts");
        throw envelopeError(env);
      }
      // a proxy's own answer (its JSON too), or another server: as for every remote call
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => { headers[k] = v; });
      throw notCards(base, url, res.status, headers, `${what} answered ${res.status} with ${excerpt(text)}, not an event stream`, false, undefined);
    }
    if (!(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      throw new CardsError("unavailable", `${base} is not a cards server: GET /v1/events/stream answered ${res.status} ${res.headers.get("content-type") ?? "without a content type"}`, {
        hint: "CARDS_URL / --url is the base URL `cards serve` printed (http://HOST:PORT)",
      });
    }
    if (lostAt !== undefined) notice(`reconnected to ${base}`);
    connected = true;
    lostAt = undefined;
    attempt = 0;
    /** the replay stopped at its bound: the rest comes from a reconnect after the last id, not live */
    let truncated = false;
    const parser = createParser({
      onEvent: (ev) => {
        if (truncated) return;
        if (ev.id) {
          // after a reconnect nothing at or before the last id printed is printed again
          if (lastId !== undefined && Number(ev.id) <= Number(lastId)) return;
          lastId = ev.id;
        }
        writeLine(ev.data);
      },
      onComment: (text) => {
        // where the server's replay left off (src/http/sse.ts)
        const live = /^live after (\d+)$/.exec(text.trim());
        // nothing printed yet: a reconnect resumes from where the stream went live, not from
        // its own start (events written while the server was down were lost)
        if (live && (lastId === undefined || Number(live[1]) > Number(lastId))) lastId = live[1];
        // the replay sent every match up to that id: the next connection starts after it
        // (when none of those 500 matched, the last id printed would ask for them again)
        const cut = /^replay truncated after (\d+)$/.exec(text.trim());
        if (cut) {
          truncated = true;
          if (lastId === undefined || Number(cut[1]) > Number(lastId)) lastId = cut[1];
        }
      },
    });
    const decoder = new TextDecoder();
    // the server sends a heartbeat every 15 s: a stream silent for three of them is dead
    // (a NAT or a proxy that dropped the idle connection without a word)
    let silent = false;
    const dead = (): void => { silent = true; answer.abort(new Error("silent")); };
    let idle = setTimeout(dead, STREAM_SILENCE_MS);
    try {
      for await (const chunk of res.body) {
        clearTimeout(idle);
        idle = setTimeout(dead, STREAM_SILENCE_MS);
        parser.feed(decoder.decode(chunk, { stream: true }));
        if (truncated) break; // more than 500 were missed: reconnect at once for the next ones
      }
    } catch { /* the connection broke: resume below */ }
    clearTimeout(idle);
    if (truncated) {
      attempt = -1;
      continue;
    }
    lostAt = performance.now(); // monotonic: a clock step must not end or stretch --reconnect-for
    notice(`the stream from ${base} ${silent ? `was silent for ${STREAM_SILENCE_MS / 1000} s (no heartbeat)` : "ended"}; reconnecting${lastId ? ` after event ${lastId}` : ""}`);
    await sleep(250);
  }
}

/** Three of the server's 15 s heartbeats (src/http/sse.ts) missed: the connection is taken as dead. */
const STREAM_SILENCE_MS = 45_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
