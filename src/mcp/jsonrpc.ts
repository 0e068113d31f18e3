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

/** A line-framed JSON-RPC endpoint: feed it input chunks, it writes answers. */
export class RpcPeer {
  private buffer = "";
  private pending = new Set<Promise<void>>();

  constructor(private readonly o: PeerOptions) {}

  /** true while the rest of a line over MAX_LINE_CHARS is being skipped */
  private skipping = false;

  /**
   * Feeds raw input; complete lines are handled, a partial line waits for the rest. Each
   * chunk is scanned once (a long line arrives in many chunks), and a line longer than
   * MAX_LINE_CHARS is answered with an error and skipped to its end.
   */
  feed(chunk: string): void {
    let start = 0;
    for (let nl = chunk.indexOf("\n"); nl >= 0; nl = chunk.indexOf("\n", start)) {
      const part = chunk.slice(start, nl);
      start = nl + 1;
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      const line = (this.buffer ? this.buffer + part : part).trim();
      this.buffer = "";
      if (line.length > this.maxLine) this.tooLong();
      else if (line) this.track(this.handleLine(line));
    }
    if (this.skipping || start === chunk.length) return;
    this.buffer += chunk.slice(start);
    if (this.buffer.length > this.maxLine) {
      this.buffer = "";
      this.skipping = true;
      this.tooLong();
    }
  }

  private tooLong(): void {
    this.send(errorMessage(null, INVALID_REQUEST, `invalid request: a message is longer than ${this.maxLine} characters`));
  }

  private get maxLine(): number {
    return this.o.maxLineChars ?? MAX_LINE_CHARS;
  }

  /** Resolves once every request received so far has been answered. */
  async drain(): Promise<void> {
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
      const answers = (await Promise.all(msg.map((m) => this.handleMessage(m)))).filter((a): a is RpcMessage => a !== undefined);
      if (answers.length) this.send(answers);
      return;
    }
    const answer = await this.handleMessage(msg);
    if (answer) this.send(answer);
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
    if (!isNotification && !validId(m.id)) return errorMessage(null, INVALID_REQUEST, "invalid request: id must be a string, number or null");
    try {
      const result = await this.o.dispatch(m.method, m.params, isNotification);
      return isNotification ? undefined : { jsonrpc: "2.0", id: m.id as JsonRpcId, result: result ?? {} };
    } catch (e) {
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
    this.o.write(JSON.stringify(msg));
  }
}

function errorMessage(id: JsonRpcId, code: number, message: string, data?: unknown): RpcMessage {
  return { jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } };
}

function validId(id: unknown): boolean {
  return typeof id === "string" || typeof id === "number" || id === null;
}

function idOf(msg: unknown): JsonRpcId {
  const id = msg && typeof msg === "object" ? (msg as RpcMessage).id : undefined;
  return validId(id) ? (id as JsonRpcId) : null;
}
