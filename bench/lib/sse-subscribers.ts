/**
 * SSE subscribers in their own process, so their reading does not share the event loop
 * of the bench's writers (the writer figure measures the server, not the bench's JS thread).
 *
 *   bun bench/lib/sse-subscribers.ts URL N
 *
 * Opens N streams on URL and prints `ready` once every one is connected. Every stream is
 * read to the end; until `measure` the bytes are only counted (drained, not parsed).
 * Commands on stdin, one per line:
 *   measure   from now on every frame is parsed; those whose data has `"title":"paced `
 *             give a delivery latency (now minus the event's commit time `at`)
 *   report    prints one JSON line: {bytes, frames, paced, dropped, ended, latencies}
 *             (`ended`: streams the server closed, e.g. a dropped slow consumer)
 */
export {};

const [url, n] = [process.argv[2]!, Number(process.argv[3] ?? 200)];

let frames = 0;
let bytes = 0;
let paced = 0;
let dropped = 0;
let ended = 0;
let measuring = false;
const latencies: number[] = [];

async function subscribe(): Promise<() => Promise<void>> {
  const res = await fetch(url);
  if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
  const reader = res.body.getReader();
  await reader.read(); // ": connected"
  return async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) { ended++; break; }
        if (!measuring) { bytes += value.byteLength; continue; } // drained, not parsed
        buf += dec.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, i);
          buf = buf.slice(i + 2);
          frames++;
          if (frame.startsWith(": dropped")) dropped++;
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (!data || !data.includes('"title":"paced ')) continue;
          const at = /"at":"([^"]+)"/.exec(data)?.[1];
          if (!at) continue;
          latencies.push(Date.now() - Date.parse(at));
          paced++;
        }
      }
    } catch { /* the bench ends the process */ }
  };
}

const readers = await Promise.all(Array.from({ length: n }, subscribe));
for (const read of readers) void read();
console.log("ready");

const dec = new TextDecoder();
let line = "";
for await (const chunk of Bun.stdin.stream()) {
  line += dec.decode(chunk);
  let i: number;
  while ((i = line.indexOf("\n")) >= 0) {
    const cmd = line.slice(0, i).trim();
    line = line.slice(i + 1);
    if (cmd === "measure") measuring = true;
    if (cmd === "report") console.log(JSON.stringify({ bytes, frames, paced, dropped, ended, latencies }));
  }
}
