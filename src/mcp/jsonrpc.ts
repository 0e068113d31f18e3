/**
 * JSON-RPC 2.0 over newline-delimited stdio (stack.md §7): one message per line, no
 * embedded newlines, nothing but protocol messages on stdout. Requests get an answer,
 * notifications never do (not even -32601). Batches (arrays) are answered as arrays.
 */
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../domain/json.ts";

export type JsonRpcId = string | number | null;

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;

/** Thrown by a handler to answer with a JSON-RPC error object. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

export interface RpcMessage {
  jsonrpc: "2.0";
  id?: JsonRpcId;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** Answers a request (its return value is the result) or handles a notification (no id). */
export type Dispatch = (method: string, params: unknown, isNotification: boolean) => Promise<unknown>;

export interface PeerOptions {
  dispatch: Dispatch;
  /** writes one serialized line (without the newline) */
  write: (line: string) => void;
  log: (message: string) => void;
  /** default MAX_LINE_CHARS */
  maxLineChars?: number;
}

/**
 * The longest message line: a 64 MiB artifact sent base64-encoded to attach_artifact
 * (~85.4 million characters) fits.
 */
export const MAX_LINE_CHARS = 96 * 1024 * 1024;

/**
 * Messages one batch may hold: each runs at once and its answers go out as one line (a
 * batch of 20,000 list_cards held gigabytes, then failed to send, answering nothing).
 * MCP's 2025-06-18 revision has no batches; older clients send a few.
 */
export const MAX_BATCH = 100;

/** The longest answer line: past it, an answer is replaced by an error naming its size. */
export const MAX_ANSWER_CHARS = 128 * 1024 * 1024;

/** A line-framed JSON-RPC endpoint: feed it input chunks, it writes answers. */
export class RpcPeer {
  private buffer = "";
  private pending = new Set<Promise<void>>();

  constructor(private readonly o: PeerOptions) {}

  /** while the rest of a line over MAX_LINE_CHARS is skipped: its first and last characters (for its id) */
  private skipping?: { head: string; tail: string };

  /**
   * Feeds raw input; complete lines are handled, a partial line waits for the rest. Each
   * chunk is scanned once (a long line arrives in many chunks), and a line longer than
   * MAX_LINE_CHARS is skipped to its end, then answered with an error under its id when
   * the id stands at the line's start or end.
   */
  feed(chunk: string): void {
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
      const part = chunk.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        const { head, tail } = this.skipping;
        this.skipping = undefined;
        this.tooLong(head, (tail + part).slice(-ID_SCAN_CHARS));
        continue;
      }
      const line = (this.buffer ? this.buffer + part : part).trim();
      this.buffer = "";
      if (line.length > this.maxLine) this.tooLong(line.slice(0, ID_SCAN_CHARS), line.slice(-ID_SCAN_CHARS));
      else if (line) this.track(this.handleLine(line));
    }
    if (start === chunk.length) return;
    const rest = chunk.slice(start);
    if (this.skipping) {
      this.skipping.tail = (this.skipping.tail + rest).slice(-ID_SCAN_CHARS);
      return;
    }
    this.buffer += rest;
    if (this.buffer.length > this.maxLine) {
      this.skipping = { head: this.buffer.slice(0, ID_SCAN_CHARS), tail: this.buffer.slice(-ID_SCAN_CHARS) };
      this.buffer = "";
    }
  }

  private tooLong(head: string, tail: string): void {
    this.send(errorMessage(idAtEdges(head.trimStart(), tail.trimEnd()), INVALID_REQUEST, `invalid request: a message is longer than ${this.maxLine} characters`));
  }

  private get maxLine(): number {
    return this.o.maxLineChars ?? MAX_LINE_CHARS;
  }

  /** decodes stdin bytes line by line; undefined while the current line has bytes that are not UTF-8 */
  private decoder: TextDecoder | undefined = new TextDecoder("utf-8", { fatal: true });

  /**
   * Feeds raw input bytes. Each line must be UTF-8 (MCP's stdio transport): one that is
   * not is answered -32700, where a lossy decode stored U+FFFD in place of the bytes (an
   * HTTP body that is not UTF-8 is refused too). A newline byte never occurs inside a
   * multi-byte character, so lines split on it safely.
   */
  feedBytes(bytes: Uint8Array): void {
    let start = 0;
    for (;;) {
      const nl = bytes.indexOf(0x0a, start);
      const end = nl < 0 ? bytes.length : nl;
      if (this.decoder) {
        let text: string | undefined;
        try {
          text = this.decoder.decode(bytes.subarray(start, end), { stream: nl < 0 });
        } catch {
          this.decoder = undefined;
        }
        if (text !== undefined) this.feed(nl < 0 ? text : `${text}\n`);
      }
      if (nl < 0) return;
      if (!this.decoder) this.rejectLine();
      start = nl + 1;
    }
  }

  /** Ends the current line as one that is not UTF-8: dropped, answered -32700 (no id can be trusted from it). */
  private rejectLine(): void {
    this.buffer = "";
    this.skipping = undefined;
    this.decoder = new TextDecoder("utf-8", { fatal: true });
    this.send(errorMessage(null, PARSE_ERROR, "parse error: the message is not valid UTF-8"));
  }

  /** Drops a partly received line (the client is gone): drain() then runs nothing new. */
  discardUnread(): void {
    this.buffer = "";
    this.skipping = undefined;
  }

  /** Resolves once every request received so far has been answered. */
  async drain(): Promise<void> {
    // a last line without its newline: not UTF-8 (or ending in half a character), it is refused too
    if (!this.decoder) this.rejectLine();
    else {
      try {
        const rest = this.decoder.decode();
        if (rest) this.feed(rest);
      } catch {
        this.rejectLine();
      }
    }
    if (this.skipping) {
      this.tooLong(this.skipping.head, this.skipping.tail);
      this.skipping = undefined;
    }
    const rest = this.buffer.trim();
    this.buffer = "";
    if (rest) this.track(this.handleLine(rest));
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Sends a notification to the client. */
  notify(method: string, params?: unknown): void {
    this.send(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async handleLine(line: string): Promise<void> {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.send(errorMessage(null, PARSE_ERROR, "parse error: not valid JSON"));
      return;
    }
    if (exceedsJsonDepth(msg)) {
      // answered unless it is a notification (an object without an id): a request or a
      // batch gets the error, with id null when none can be read
      const isRequest = Array.isArray(msg) || (msg !== null && typeof msg === "object" && Object.hasOwn(msg, "id"));
      if (isRequest) this.send(errorMessage(idOf(msg), INVALID_REQUEST, `invalid request: JSON nests deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    if (Array.isArray(msg)) {
      if (msg.length === 0) return this.send(errorMessage(null, INVALID_REQUEST, "empty batch"));
      if (msg.length > MAX_BATCH) {
        // nothing in it runs: each request is answered, so no caller waits for ever
        const why = `invalid request: a batch of ${msg.length} messages; at most ${MAX_BATCH} (send the rest in further batches or lines; nothing in this one ran)`;
        const requests = msg.filter((m) => m !== null && typeof m === "object" && Object.hasOwn(m, "id"));
        return this.send(requests.length ? requests.map((m) => errorMessage(idOf(m), INVALID_REQUEST, why)) : errorMessage(null, INVALID_REQUEST, why));
      }
      const answers = (await Promise.all(msg.map((m) => this.handleMessage(m)))).filter((a): a is RpcMessage => a !== undefined);
      if (answers.length) this.send(answers);
      return;
    }
    const answer = await this.handleMessage(msg);
    if (answer) this.send(answer);
  }

  /** requests being handled, by id: true once the client cancelled it (notifications/cancelled) */
  private running = new Map<JsonRpcId, boolean>();

  /**
   * MCP notifications/cancelled: the request, if still running, gets no answer (the
   * receiver should not respond). Work it already committed stays committed: a write is
   * one transaction, never half done. `initialize` cannot be cancelled.
   */
  private cancel(params: unknown): void {
    const id = (params as { requestId?: unknown } | null)?.requestId;
    if (validId(id) && this.running.has(id as JsonRpcId)) this.running.set(id as JsonRpcId, true);
  }

  private async handleMessage(msg: unknown): Promise<RpcMessage | undefined> {
    if (!msg || typeof msg !== "object" || (msg as RpcMessage).jsonrpc !== "2.0") {
      return errorMessage(idOf(msg), INVALID_REQUEST, 'invalid request: expected an object with jsonrpc "2.0"');
    }
    const m = msg as RpcMessage;
    if (typeof m.method !== "string") {
      // a response to something we sent (we send no requests), or garbage
      if ("result" in m || "error" in m) return undefined;
      return errorMessage(idOf(m), INVALID_REQUEST, "invalid request: method must be a string");
    }
    const isNotification = !("id" in m);
    if (!isNotification && !validId(m.id)) {
      // an integer past 2^53 is read rounded: answered under it, the caller could not match it
      const why = Number.isInteger(m.id) ? "an integer past 2^53 - 1 cannot be echoed exactly; send it as a string" : "it must be a string or an integer (MCP: never null)";
      return errorMessage(null, INVALID_REQUEST, `invalid request: id ${JSON.stringify(m.id)}: ${why}`);
    }
    if (isNotification && m.method === "notifications/cancelled") return void this.cancel(m.params);
    const id = m.id as JsonRpcId;
    const cancellable = !isNotification && m.method !== "initialize";
    // two requests in flight under one id: a cancel, or an answer, could not tell them apart
    if (cancellable && this.running.has(id)) {
      return errorMessage(id, INVALID_REQUEST, `invalid request: id ${JSON.stringify(id)} is in use by a request still running; ids must be unique among requests in flight`);
    }
    if (cancellable) this.running.set(id, false);
    const cancelled = (): boolean => {
      if (!cancellable) return false;
      const c = this.running.get(id) === true;
      this.running.delete(id);
      return c;
    };
    try {
      const result = await this.o.dispatch(m.method, m.params, isNotification);
      if (cancelled()) return undefined;
      return isNotification ? undefined : { jsonrpc: "2.0", id, result: result ?? {} };
    } catch (e) {
      if (cancelled()) return undefined;
      if (isNotification) {
        if (!(e instanceof RpcError)) this.o.log(`notification ${m.method} failed: ${String((e as Error)?.stack ?? e)}`);
        return undefined;
      }
      if (e instanceof RpcError) return errorMessage(m.id as JsonRpcId, e.code, e.message, e.data);
      this.o.log(`${m.method} failed: ${String((e as Error)?.stack ?? e)}`);
      return errorMessage(m.id as JsonRpcId, INTERNAL_ERROR, "internal error; see the server log on stderr");
    }
  }

  private send(msg: RpcMessage | RpcMessage[]): void {
    // JSON.stringify never emits a raw newline, so one message is always one line
    if (!Array.isArray(msg)) return void this.o.write(this.encode(msg));
    const parts: string[] = [];
    let total = 2;
    for (const m of msg) {
      let part = this.encode(m);
      if (total + part.length + 1 > MAX_ANSWER_CHARS) {
        part = JSON.stringify(errorMessage(m.id ?? null, INTERNAL_ERROR, `the batch's answer grew past ${MAX_ANSWER_CHARS} characters: this request ran, but its answer was not sent; ask in smaller batches`));
      }
      total += part.length + 1;
      parts.push(part);
    }
    this.o.write(`[${parts.join(",")}]`);
  }

  /** One answer as a line, or an error under its id when it is too large to send. */
  private encode(m: RpcMessage): string {
    let size: number | undefined;
    try {
      const line = JSON.stringify(m);
      if (line.length <= MAX_ANSWER_CHARS) return line;
      size = line.length;
    } catch (e) {
      this.o.log(`an answer could not be serialized: ${String(e)}`);
    }
    const what = size === undefined ? "too large to serialize" : `${size} characters, past ${MAX_ANSWER_CHARS}`;
    return JSON.stringify(errorMessage(m.id ?? null, INTERNAL_ERROR, `the answer is ${what}: the request ran, but its answer cannot be sent; ask for less (a smaller limit, brief)`));
  }
}

function errorMessage(id: JsonRpcId, code: number, message: string, data?: unknown): RpcMessage {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** MCP: a request id is a string or an integer, never null (unlike base JSON-RPC). */
function validId(id: unknown): boolean {
  return typeof id === "string" || Number.isSafeInteger(id);
}

/** How much of an over-long line's start and end is kept to find its id. */
const ID_SCAN_CHARS = 512;
const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `"id"` among the top-level members before anything nests: `{"jsonrpc":"2.0","id":7,"method":...` */
const ID_AT_START = new RegExp(String.raw`^\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*${ID_VALUE}`);
/** `"id"` as the last member of the top-level object: `...,"id":7}` */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}$`);

/** The id of a message too long to parse, read from its first or last characters; null if neither shows it. */
function idAtEdges(head: string, tail: string): JsonRpcId {
  const m = ID_AT_START.exec(head) ?? ID_AT_END.exec(tail);
  if (!m) return null;
  try {
    const id = JSON.parse(m[1]!) as unknown;
    return validId(id) ? (id as JsonRpcId) : null;
  } catch {
    return null;
  }
}

function idOf(msg: unknown): JsonRpcId {
  const id = msg && typeof msg === "object" ? (msg as RpcMessage).id : undefined;
  return validId(id) ? (id as JsonRpcId) : null;
}
