/**
 * Serves the browser UI embedded at build time (src/generated/ui-assets.gen.ts) under /ui/.
 * Hashed files get an immutable cache; index.html (also the fallback for any other path
 * under /ui/, so client-side URLs survive a reload) is revalidated by ETag. GET / sends
 * the browser to /ui/. No file system access: lookups are exact keys of the asset map.
 */
import type { H3, H3Event } from "h3";
import { UI_ASSETS, type UiAsset } from "../generated/ui-assets.gen.ts";

const INDEX = "index.html";
const IMMUTABLE = "public, max-age=31536000, immutable";
const CSP = "default-src 'self'; img-src 'self' data: https:; style-src 'self'; script-src 'self'; "
  + "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

const decoded = new Map<string, Uint8Array>();

function bytes(path: string, asset: UiAsset): Uint8Array {
  let b = decoded.get(path);
  if (!b) {
    const bin = atob(asset.body);
    b = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) b[i] = bin.charCodeAt(i);
    decoded.set(path, b);
  }
  return b;
}

function send(req: Request, path: string, asset: UiAsset, cache: string, extra: Record<string, string> = {}): Response {
  const etag = `"${asset.etag}"`;
  const headers: Record<string, string> = {
    "content-type": asset.type, "cache-control": cache, etag, "x-content-type-options": "nosniff", ...extra,
  };
  if (req.headers.get("if-none-match") === etag) return new Response(null, { status: 304, headers });
  return new Response(req.method === "HEAD" ? null : (bytes(path, asset) as BodyInit), { headers });
}

/** The answer for a path under /ui/ (the part after "/ui/"). */
export function uiResponse(req: Request, rel: string): Response {
  const asset = rel !== INDEX ? UI_ASSETS[rel] : undefined;
  if (asset) return send(req, rel, asset, IMMUTABLE);
  // a missing script or stylesheet must not be answered with the page
  if (/\.(m?js|css|map|png|svg|ico|woff2?|json)$/i.test(rel)) {
    return new Response(`no UI file ${rel}\n`, { status: 404, headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" } });
  }
  const index = UI_ASSETS[INDEX]!;
  return send(req, INDEX, index, "no-cache", { "content-security-policy": CSP, "referrer-policy": "same-origin" });
}

function redirect(location: string): Response {
  return new Response(null, { status: 302, headers: { location } });
}

/** Mounts GET / (redirect), /ui (redirect to /ui/) and /ui/** (GET and HEAD) on the app. */
export function registerUi(app: H3): void {
  const handler = (event: H3Event): Response => {
    const url = new URL(event.req.url);
    if (url.pathname === "/ui") return redirect(`/ui/${url.search}`);
    let rel = url.pathname.slice("/ui/".length);
    try { rel = decodeURIComponent(rel); } catch { /* keep it raw: it will not match an asset */ }
    return uiResponse(event.req, rel);
  };
  app.get("/", () => redirect("/ui/"));
  app.head("/", () => redirect("/ui/"));
  for (const path of ["/ui", "/ui/**"]) {
    app.get(path, handler);
    app.head(path, handler);
  }
}
