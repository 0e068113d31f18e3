/**
 * The browser UI's files (path under /ui/ -> content type, ETag and base64 body), served
 * by src/http/ui.ts. THIS CHECKED-IN COPY IS THE SOURCE-RUN FALLBACK PAGE: build.ts builds src/ui/ and hands the
 * real module to the compiler in its place, so dist/cards always carries the UI and this
 * file stays unchanged. `bun build.ts --write-ui` writes the real module here (for running
 * from source); do not commit that version.
 */
export interface UiAsset { type: string; etag: string; body: string }

export const UI_BUILT: boolean = false;

export const UI_ASSETS: Record<string, UiAsset> = {
  "index.html": {
    type: "text/html;charset=utf-8",
    etag: "source-fallback",
    body: "PCFkb2N0eXBlIGh0bWw+PGh0bWwgbGFuZz0iZW4iPjxoZWFkPjxtZXRhIGNoYXJzZXQ9InV0Zi04Ij48dGl0bGU+Y2FyZHM8L3RpdGxlPjwvaGVhZD48Ym9keSBzdHlsZT0iZm9udC1mYW1pbHk6c2Fucy1zZXJpZjttYXJnaW46M2VtIj48aDE+VGhlIGJvYXJkIFVJIGlzIG5vdCBidWlsdCBpbnRvIHRoaXMgY29weTwvaDE+PHA+VGhlIGJyb3dzZXIgVUkgaXMgYnVuZGxlZCBieSA8Y29kZT5idW4gYnVpbGQudHM8L2NvZGU+IGludG8gPGNvZGU+ZGlzdC9jYXJkczwvY29kZT4uIFJ1biA8Y29kZT5ucG0gcnVuIGJ1aWxkPC9jb2RlPiBhbmQgc3RhcnQgPGNvZGU+ZGlzdC9jYXJkcyBzZXJ2ZTwvY29kZT4sIG9yIHJ1biA8Y29kZT5idW4gYnVpbGQudHMgLS13cml0ZS11aTwvY29kZT4gdG8gc2VydmUgaXQgZnJvbSBzb3VyY2UuPC9wPjxwPlRoZSBBUEkgaXMgdW5kZXIgPGEgaHJlZj0iL3YxL3dvcmtzcGFjZSI+L3YxPC9hPi48L3A+PC9ib2R5PjwvaHRtbD4=",
  },
};
