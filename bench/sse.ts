/**
 * bench/sse: 200 SSE subscribers while writers post 500 cards/s for 10 s. Reports the
 * delivery latency from commit (the event's `at`) to receipt, p50/p99; the paced writers'
 * rate and latency with and without the subscribers; and the writers' closed-loop
 * (saturated) throughput with and without them. The subscribers run in their own
 * process (lib/sse-subscribers.ts): reading 200 streams on the writers' event loop measured
 * the bench's JS thread, not the server.
 * Env: SUBS (200), RATE (500/s), SECS (10), WRITERS (8 closed-loop writers), TPUT_SECS (5)
 */
import { join } from "node:path";
import { BENCH, BUN, cardsBinary, envNum, int, machineNote, median, ms, quantile, ratio, report, startServer, workDir } from "./lib/util.ts";
import { initWorkspace } from "./lib/seed.ts";

const SUBS = envNum("SUBS", 200);
const RATE = envNum("RATE", 500);
const SECS = envNum("SECS", 10);
const WRITERS = envNum("WRITERS", 8);
const TPUT_SECS = envNum("TPUT_SECS", 5);

const bin = await cardsBinary();
const dir = workDir("sse");
await initWorkspace(bin, dir);
const server = await startServer([bin, "serve", "--dir", dir, "--port", "0"]);
const post = (title: string) =>
  fetch(`${server.url}/v1/cards`, { method: "POST", headers: { "content-type": "application/json", "x-service-actor": "ada" }, body: JSON.stringify({ type_id: "task", title }) });

/** Closed-loop write throughput: WRITERS clients posting back to back for TPUT_SECS. */
async function throughput(label: string): Promise<number> {
  let done = 0;
  const end = performance.now() + TPUT_SECS * 1000;
  await Promise.all(Array.from({ length: WRITERS }, async () => {
    while (performance.now() < end) if ((await post(`${label} ${done}`)).status === 201) done++;
  }));
  return done / TPUT_SECS;
}

/** Paced writes: RATE per second for SECS; each write's latency (send to response). */
async function paced(label: string): Promise<{ elapsed: number; rate: number; latencies: number[] }> {
  const total = RATE * SECS;
  const latencies: number[] = [];
  const t0 = performance.now();
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    const sent = performance.now();
    inflight.push(post(`${label} ${i}`).then((r) => { if (r.status === 201) latencies.push(performance.now() - sent); }));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - t0) / 1000;
  return { elapsed, rate: latencies.length / elapsed, latencies };
}

try {
  const before = await throughput("warm");
  const base = await throughput("alone");
  const pacedAlone = await paced("alone-paced");
  // subscribers: a separate process reads every frame of every stream
  const subs = Bun.spawn([BUN, join(BENCH, "lib", "sse-subscribers.ts"), `${server.url}/v1/events/stream?types=card_created`, String(SUBS)], {
    stdin: "pipe", stdout: "pipe", stderr: "inherit",
  });
  const lines = subs.stdout.getReader();
  const dec = new TextDecoder();
  let out = "";
  const nextLine = async (): Promise<string> => {
    for (;;) {
      const i = out.indexOf("\n");
      if (i >= 0) { const l = out.slice(0, i); out = out.slice(i + 1); return l; }
      const { value, done } = await lines.read();
      if (done) throw new Error("the subscriber process ended early");
      out += dec.decode(value, { stream: true });
    }
  };
  const command = async (c: string): Promise<void> => { subs.stdin.write(`${c}\n`); await subs.stdin.flush(); };
  if ((await nextLine()) !== "ready") throw new Error("subscribers did not connect");
  const withSubs = await throughput("subscribed");
  await Bun.sleep(500); // let the subscribers read what is still in flight
  await command("measure");
  // paced writes: RATE per second for SECS (the subscribers measure delivery)
  const total = RATE * SECS;
  const pacedSubs = await paced("paced");
  const elapsed = pacedSubs.elapsed;
  let stats: { frames: number; paced: number; dropped: number; ended: number; latencies: number[] };
  const deadline = Date.now() + 5000;
  for (;;) {
    await command("report");
    stats = JSON.parse(await nextLine());
    if (stats.paced >= total * SUBS || Date.now() > deadline) break;
    await Bun.sleep(100);
  }
  subs.kill();
  await subs.exited;
  const { latencies, paced: received, dropped, ended } = stats;
  void before;

  const p50 = median(latencies);
  const p99 = quantile(latencies, 0.99);
  const slowdown = 1 - withSubs / base;
  const wAlone = median(pacedAlone.latencies);
  const wSubs = median(pacedSubs.latencies);
  const pacedSlowdown = wSubs / wAlone - 1;
  report("sse", `SSE fan-out: ${SUBS} subscribers, ${RATE} writes/s for ${SECS} s`, [
    { figure: "delivery latency p50 (commit -> receipt)", value: `${ms(p50)} ms`, target: "-" },
    { figure: "delivery latency p99", value: `${ms(p99)} ms`, target: "< 50 ms", pass: p99 < 50 },
    { figure: "events delivered", value: `${int(received)} of ${int(total * SUBS)}`, note: `${dropped} subscribers dropped, ${ended} streams ended; paced writes took ${elapsed.toFixed(1)} s`, pass: received === total * SUBS && ended === 0 },
    {
      figure: `writers at ${RATE}/s with ${SUBS} subscribers: rate, and write latency p50 / p99`,
      value: `${int(pacedSubs.rate)}/s, ${ms(wSubs)} / ${ms(quantile(pacedSubs.latencies, 0.99))} ms`,
      floor: `without subscribers: ${int(pacedAlone.rate)}/s, ${ms(wAlone)} / ${ms(quantile(pacedAlone.latencies, 0.99))} ms`,
      ratio: `${ratio(wSubs / wAlone)} p50`,
      note: "the scenario's writers: each write's time from send to response, paced, same server",
      target: "slowed < 10%", pass: pacedSubs.rate >= pacedAlone.rate * 0.9 && pacedSlowdown < 0.1,
    },
    { figure: `writer throughput at saturation, ${WRITERS} closed-loop clients, with ${SUBS} subscribers`, value: `${int(withSubs)}/s`, floor: `${int(base)}/s without subscribers`, ratio: ratio(withSubs / base), note: "server CPU-bound: the fan-out's own CPU (and the subscriber process's, on the same 2 vCPUs) comes out of the writes", target: "slowed < 10%", pass: slowdown < 0.1 },
  ], machineNote());
} finally {
  await server.stop();
}
