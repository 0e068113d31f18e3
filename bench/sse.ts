/**
 * bench/sse: 200 SSE subscribers while writers post 500 cards/s for 10 s. Reports the
 * delivery latency from commit (the event's `at`) to receipt, p50/p99, and the writers'
 * closed-loop throughput with and without the subscribers.
 * Env: SUBS (200), RATE (500/s), SECS (10), WRITERS (8 closed-loop writers), TPUT_SECS (5)
 */
import { cardsBinary, envNum, int, machineNote, median, ms, quantile, ratio, report, startServer, workDir } from "./lib/util.ts";
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

try {
  const before = await throughput("warm");
  const base = await throughput("alone");
  // subscribers
  const latencies: number[] = [];
  let received = 0;
  let dropped = 0;
  const controllers: AbortController[] = [];
  await Promise.all(Array.from({ length: SUBS }, async () => {
    const ac = new AbortController();
    controllers.push(ac);
    const res = await fetch(`${server.url}/v1/events/stream?types=card_created`, { signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read(); // ": connected"
    void (async () => {
      const dec = new TextDecoder();
      let buf = "";
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true });
          let i: number;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const frame = buf.slice(0, i);
            buf = buf.slice(i + 2);
            if (frame.startsWith(": dropped")) dropped++;
            const data = /^data: (.*)$/m.exec(frame)?.[1];
            if (!data) continue;
            const at = /"at":"([^"]+)"/.exec(data)?.[1];
            if (!at || !data.includes('"title":"paced ')) continue;
            latencies.push(Date.now() - Date.parse(at));
            received++;
          }
        }
      } catch { /* aborted */ }
    })();
  }));
  const withSubs = await throughput("subscribed");
  latencies.length = 0;
  received = 0;
  // paced writes: RATE per second for SECS
  const total = RATE * SECS;
  const t0 = performance.now();
  const inflight: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = t0 + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 1) await Bun.sleep(wait);
    inflight.push(post(`paced ${i}`));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - t0) / 1000;
  const deadline = Date.now() + 5000;
  while (received < total * SUBS && Date.now() < deadline) await Bun.sleep(50);
  for (const c of controllers) c.abort();
  void before;

  const p50 = median(latencies);
  const p99 = quantile(latencies, 0.99);
  const slowdown = 1 - withSubs / base;
  report("sse", `SSE fan-out: ${SUBS} subscribers, ${RATE} writes/s for ${SECS} s`, [
    { figure: "delivery latency p50 (commit -> receipt)", value: `${ms(p50)} ms`, target: "-" },
    { figure: "delivery latency p99", value: `${ms(p99)} ms`, target: "< 50 ms", pass: p99 < 50 },
    { figure: "events delivered", value: `${int(received)} of ${int(total * SUBS)}`, note: `${dropped} subscribers dropped; paced writes took ${elapsed.toFixed(1)} s`, pass: received === total * SUBS },
    { figure: `writer throughput, ${WRITERS} closed-loop clients, with ${SUBS} subscribers`, value: `${int(withSubs)}/s`, floor: `${int(base)}/s without subscribers`, ratio: ratio(withSubs / base), target: "slowed < 10%", pass: slowdown < 0.1 },
  ], machineNote());
} finally {
  await server.stop();
}
