/** Browser-free parts of the UI: the markdown renderer's safety and the in-lane order. */
import { describe, expect, test } from "bun:test";
import { markdown } from "../../src/ui/markdown.ts";
import { laneComparator } from "../../src/ui/sort.ts";
import { compareCards, parseSort } from "../../src/domain/sort.ts";

describe("markdown", () => {
  test("escapes HTML before anything else", () => {
    const html = markdown(`<script>alert(1)</script> <img src=x onerror=alert(1)> "q" 'a' & b`);
    expect(html).toBe("<p>&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(1)&gt; &quot;q&quot; &#39;a&#39; &amp; b</p>");
  });

  test("links only to http(s), mailto and relative targets", () => {
    expect(markdown("[a](https://x.y/?a=1&b=2)")).toBe('<p><a href="https://x.y/?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">a</a></p>');
    expect(markdown("[a](javascript:alert(1))")).not.toContain("<a");
    // one level of parentheses in a target (Wikipedia), and a title
    expect(markdown("[w](https://en.wikipedia.org/wiki/Foo_(bar))")).toBe('<p><a href="https://en.wikipedia.org/wiki/Foo_(bar)" target="_blank" rel="noopener noreferrer">w</a></p>');
    expect(markdown('![i](https://x.y/p.png "a <c> & d")')).toBe('<p><img src="https://x.y/p.png" alt="i" title="a &lt;c&gt; &amp; d" loading="lazy" referrerpolicy="no-referrer"></p>');
    expect(markdown('[t](https://x.y "hi")')).toBe('<p><a href="https://x.y" title="hi" target="_blank" rel="noopener noreferrer">t</a></p>');
    expect(markdown("[a](JaVaScRiPt:alert)")).not.toContain("<a");
    expect(markdown("[a](data:text/html,x)")).not.toContain("<a");
    expect(markdown('[a](https://x.y/"onmouseover="x)')).not.toContain('"onmouseover');
    expect(markdown("see https://x.y/p.")).toBe('<p>see <a href="https://x.y/p" target="_blank" rel="noopener noreferrer">https://x.y/p</a>.</p>');
  });

  test("pictures only from https or this server; quotes cannot leave the attribute", () => {
    expect(markdown("![a](https://x.y/p.png)")).toBe('<p><img src="https://x.y/p.png" alt="a" loading="lazy" referrerpolicy="no-referrer"></p>');
    expect(markdown("![a](/v1/artifacts/p)")).toContain('<img src="/v1/artifacts/p"');
    expect(markdown("![a](http://x.y/p.png)")).toBe('<p><a href="http://x.y/p.png" target="_blank" rel="noopener noreferrer">a</a></p>');
    expect(markdown("![a](javascript:alert(1))")).not.toContain("<img");
    expect(markdown("![a](//evil.example/p.png)")).not.toContain("<img");
    expect(markdown('![a"b](https://x/"onerror="x)')).not.toContain('"onerror');
    expect(markdown("[![i](https://a/b.png)](https://c)")).toBe('<p><a href="https://c" target="_blank" rel="noopener noreferrer"><img src="https://a/b.png" alt="i" loading="lazy" referrerpolicy="no-referrer"></a></p>');
  });

  test("a bare URL never swallows a stashed link or picture into its href", () => {
    const a = (href: string, text = href) => `<a href="${href}" target="_blank" rel="noopener noreferrer">${text}</a>`;
    // the reviewer's repro: the stashed <a> landed inside the bare URL's href and added an attribute
    expect(markdown("https://a.example/[x](onmouseover=alert//)")).toBe(`<p>${a("https://a.example/")}${a("onmouseover=alert//", "x")}</p>`);
    expect(markdown("https://a.example/![p](https://b.example/p.png)")).toBe(
      `<p>${a("https://a.example/")}<img src="https://b.example/p.png" alt="p" loading="lazy" referrerpolicy="no-referrer"></p>`);
    // a link or picture whose URL or alt text holds stashed markup stays text
    expect(markdown("[x](https://a/![i](https://b/c.png))")).not.toContain('href="https://a/<');
    expect(markdown("![`x`](https://b/c.png)")).not.toContain('alt="<code>');
    for (const md of ["https://a/[x](y)z", "x https://a/`c` [l](https://b/![i](/p))", "(https://a/[\"](b))"]) {
      expect(markdown(md)).not.toMatch(/="[^"]*</); // no tag inside an attribute value
    }
  });

  test("control characters, DEL and spaces before a scheme do not make it relative", () => {
    for (const c of ["\u0001", "\u0008", "\u001f", "\u007f", "\u000b", "\u000c"]) {
      expect(markdown(`[a](${c}javascript:alert(1))`)).not.toContain("<a");
      expect(markdown(`![a](${c}javascript:alert(1))`)).not.toContain("<a");
      expect(markdown(`![a](/p${c}.png)`)).not.toContain("<img");
    }
    expect(markdown("[a](java\u0001script:alert(1))")).not.toContain("<a");
    expect(markdown("[a](docs/page)")).toContain('<a href="docs/page"');
  });

  test("blocks and inline marks", () => {
    expect(markdown("# T\n\npara **b** *i* `c<d>` ~~s~~\nsoft  \nhard")).toBe(
      "<h3>T</h3><p>para <strong>b</strong> <em>i</em> <code>c&lt;d&gt;</code> <del>s</del>\nsoft<br>hard</p>");
    expect(markdown("- [ ] a\n- [x] b\n\n1. one\n2. two")).toBe(
      '<ul><li><span class="md-task" aria-label="open">☐</span> a</li><li><span class="md-task done" aria-label="done">☑</span> b</li></ul><ol><li>one</li><li>two</li></ol>');
    expect(markdown("> q\n\n```\n<b>*x*</b>\n```\n---")).toBe("<blockquote><p>q</p></blockquote><pre><code>&lt;b&gt;*x*&lt;/b&gt;</code></pre><hr>");
    expect(markdown("snake_case_name and a_b_c")).toBe("<p>snake_case_name and a_b_c</p>");
  });
});

describe("lane order", () => {
  const card = (i: number, fields: Record<string, unknown>) => ({
    id: `card_${String(i).padStart(16, "0")}`, type_id: "task", schema_version: 1, title: ["b", "A", "a", "c"][i % 4]!, status: "todo",
    fields, tags: [], version: 1, created_at: `2026-01-0${(i % 9) + 1}T00:00:00.000Z`, updated_at: `2026-02-0${(i * 7) % 9 + 1}T00:00:00.000Z`,
    status_since: "2026-01-01T00:00:00.000Z", created_by: "ada",
  });
  const cards = Array.from({ length: 40 }, (_, i) => card(i, i % 5 === 0 ? {} : { n: i % 3 === 0 ? "x" : (i * 37) % 11, p: ["low", "High", "high"][i % 3] }));

  test("text compares by code point, as the server: U+E000-U+FFFF before emoji (before: UTF-16 units put them after)", () => {
    const titled = ["🚀 rocket", "ｆｕｌｌ", "\ue000 private", "Zeta", "𝔸 double"].map((title, i) => ({ ...card(i, {}), title }));
    const ui = [...titled].sort(laneComparator("title")).map((c) => c.title);
    const server = [...titled].sort(compareCards(parseSort("title", new Set())) as any).map((c) => c.title);
    expect(ui).toEqual(["Zeta", "\ue000 private", "ｆｕｌｌ", "𝔸 double", "🚀 rocket"]);
    expect(ui).toEqual(server);
  });

  for (const spec of ["-updated_at", "created_at", "title", "-title", "fields.n", "-fields.n", "fields.p", "-fields.p"]) {
    test(`${spec} matches the server's order`, () => {
      const ui = [...cards].sort(laneComparator(spec)).map((c) => c.id);
      const server = [...cards].sort(compareCards(parseSort(spec, new Set(["n", "p"]))) as any).map((c) => c.id);
      expect(ui).toEqual(server);
    });
  }
});

describe("throttle", () => {
  test("steady calls run at most once per interval, and a slow run spaces the next by ten times its length", async () => {
    const { throttle } = await import("../../src/ui/dom.ts");
    const runs: Array<{ start: number; took: number }> = [];
    const slow = throttle(async () => {
      const start = Date.now();
      await Bun.sleep(40);
      runs.push({ start, took: Date.now() - start });
    }, 20, 0);
    const caller = setInterval(slow, 5);
    await Bun.sleep(1500);
    clearInterval(caller);
    // a run of ~40 ms is followed by the next ~400 ms after it started (not 20 ms): a slow
    // read is asked of the server at most a tenth of the time
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.length).toBeLessThanOrEqual(4);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.start - runs[i - 1]!.start).toBeGreaterThanOrEqual(runs[i - 1]!.took * 10 - 2);
  });
});
