/**
 * Contrast ratios (WCAG 2) from the computed styles of a page: an element's text colour
 * against the background it sits on, composed over every translucent background above it.
 */
import type { Page } from "playwright-core";

export type Measure = "text" | "border" | "outline";

/**
 * The ratio for the element `sel` matches: its text on its background, its border colour
 * against what is outside it (the parent's background), or its outline against that.
 */
export function contrast(page: Page, sel: string, measure: Measure = "text"): Promise<number> {
  return page.evaluate(([sel, measure]) => {
    // any CSS colour (rgb(), color(srgb ...), oklab() from color-mix) as [r, g, b, alpha], through a canvas pixel
    const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true })!;
    const parse = (s: string): number[] => {
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = s;
      ctx.fillRect(0, 0, 1, 1);
      const [r, g, b, a] = ctx.getImageData(0, 0, 1, 1).data;
      return [r!, g!, b!, a! / 255];
    };
    const over = (top: number[], bottom: number[]) => [0, 1, 2].map((i) => top[i]! * top[3]! + bottom[i]! * (1 - top[3]!)).concat(1);
    const backdrop = (el: Element | null): number[] => {
      const layers: number[][] = [];
      for (let e = el; e; e = e.parentElement) {
        const c = parse(getComputedStyle(e).backgroundColor);
        if (c[3]! > 0) layers.push(c);
        if (c[3] === 1) break;
      }
      return layers.reverse().reduce((acc, c) => over(c, acc), [255, 255, 255, 1]);
    };
    const lum = (c: number[]) => {
      const f = (v: number) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
      return 0.2126 * f(c[0]!) + 0.7152 * f(c[1]!) + 0.0722 * f(c[2]!);
    };
    const ratio = (a: number[], b: number[]) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
    const el = document.querySelector(sel);
    if (!el) throw new Error(`no element matches ${sel}`);
    const cs = getComputedStyle(el);
    if (measure === "text") { const bg = backdrop(el); return ratio(over(parse(cs.color), bg), bg); }
    const outside = backdrop(el.parentElement);
    return ratio(over(parse(measure === "border" ? cs.borderTopColor : cs.outlineColor), outside), outside);
  }, [sel, measure] as const);
}
