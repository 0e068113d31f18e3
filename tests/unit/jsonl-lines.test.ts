/** Splitting a dump into lines: at "\n" only, CRLF too, each chunk scanned once. */
import { expect, test } from "bun:test";
import { jsonlLines } from "../../src/service/portability.ts";

async function lines(chunks: string[]): Promise<string[]> {
  const out: string[] = [];
  async function* src() { for (const c of chunks) yield c; }
  for await (const l of jsonlLines(src())) out.push(l);
  return out;
}

test("lines split at \\n only: U+2028 and U+2029 stay inside, CRLF loses its CR, a last line without \\n counts", async () => {
  expect(await lines(['{"a":"x\u2028y"}\r\n{"b":', '"z\u2029"}\n', "tail"])).toEqual(['{"a":"x\u2028y"}', '{"b":"z\u2029"}', "tail"]);
  expect(await lines(["", "a", "", "b\n", "\n", "c"])).toEqual(["ab", "", "c"]);
});

test("a long line in many chunks comes out whole", async () => {
  const long = "x".repeat(3_000_000);
  const chunks: string[] = [];
  for (let i = 0; i < long.length; i += 65_536) chunks.push(long.slice(i, i + 65_536));
  chunks.push("\nnext\n");
  const out = await lines(chunks);
  expect(out.map((l) => l.length)).toEqual([3_000_000, 4]);
});
