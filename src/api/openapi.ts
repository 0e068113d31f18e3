/**
 * GET /v1/openapi.json: OpenAPI 3.1 generated from the live workspace. Paths come from the
 * shared route table (plus the SSE stream), static request shapes from the valibot
 * schemas, and per-type create/update bodies from the field definitions.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { ROUTES, VERSION, type Route } from "./routes.ts";
import { REQUEST_SHAPES, STREAM_REPLAY_LIMIT, type JsonSchema, type Service } from "../service/index.ts";
import { BoardSchema } from "../service/board-shape.ts";
import { OPERATIONS, type OperationDoc } from "./openapi-ops.ts";
import { COMPONENTS } from "./openapi-components.ts";
import { addCardTypeSchemas } from "./openapi-types.ts";

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ "application/json": { schema } });
const STREAM = "SSE frames: `event: <type>`, `id: <event id>` (durable events only: resume from it with Last-Event-ID), `data: <the Event as JSON>` (the Event schema). "
  + "Comment frames: `: connected` first; `: live after <id>` once the replay is sent (`: replay truncated after <id>` when more than " + STREAM_REPLAY_LIMIT + " events were due: page GET /events from that id); "
  + "`: keepalive` every 15 s; `: board <id> was removed` when a reload removes the board the stream follows, which is then closed; `: dropped, reconnect` when the client read too slowly, then closed.";

/** The OpenAPI document for the definitions live now. */
export function openApiDocument(svc: Service, serverUrl?: string): Record<string, unknown> {
  const defs = svc.defs;
  const schemas: Record<string, JsonSchema> = { ...COMPONENTS };
  for (const [name, shape] of Object.entries(REQUEST_SHAPES)) schemas[name] = valibotSchema(shape());
  describeRequestShapes(schemas);
  // the board file as POST /boards takes it and GET /boards/{id} answers it
  schemas.Board = { ...valibotSchema(BoardSchema), description: "A board definition (definitions/boards/<id>.json); another key is refused (422)" };
  addCardTypeSchemas(schemas, defs);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    if (route.path === "/openapi.json") continue; // the document covers every route but itself
    const doc = OPERATIONS[`${route.method} ${route.path}`];
    if (!doc) throw new Error(`no OpenAPI description for ${route.method} ${route.path}`);
    const path = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, doc);
  }
  paths["/events/stream"] = { get: operation({ method: "GET", path: "/events/stream", summary: "Server-Sent Events: live events, resumable" } as Route, OPERATIONS["GET /events/stream"]!) };
  const stream = paths["/events/stream"].get as Record<string, unknown>;
  stream.description = `${STREAM} At most CARDS_MAX_STREAMS streams are open at once (default 1000): the next is refused with 503 \`unavailable\`.`;
  (stream.responses as Record<string, unknown>)["503"] = { $ref: "#/components/responses/Unavailable" };
  (stream.parameters as unknown[]).push({ name: "Last-Event-ID", in: "header", required: false, schema: { type: "string" }, description: "the id of the last event received: replay after it (as `since`)" });

  return {
    openapi: "3.1.0",
    info: {
      title: `cards: ${defs.workspace.name}`,
      version: VERSION,
      description: "Card coordination service (beta). No authentication: identity comes from X-Service-Actor, CARDS_ACTOR or settings.default_user.",
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: serverUrl ? `${serverUrl}/v1` : "/v1" }],
    security: [],
    tags: [...new Set(Object.values(OPERATIONS).map((o) => o.tag))].sort().map((name) => ({ name, description: `${name} operations` })),
    paths,
    components: {
      schemas,
      parameters: {
        Actor: {
          name: "X-Service-Actor", in: "header", required: false, schema: { type: "string" },
          description: "On a write, who acts (created_by, the event actor); on a read, whom `me` means (owner=me, actor=me, a saved filter with me). Falls back to CARDS_ACTOR, then settings.default_user. An `actor` key in a body is ignored: this decides.",
        },
        IdempotencyKey: { name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", minLength: 1, maxLength: 255, pattern: "^[!-~]+$" }, description: "replays the stored answer of the first request with this key; printable ASCII" },
      },
      responses: {
        Error: {
          description: "The error envelope. A method a path does not take is 405 `method_not_allowed`, with the ones it takes in Allow and valid_options.",
          headers: { Allow: { description: "with 405: the methods the path takes, such as `GET, PATCH, DELETE`", schema: { type: "string" } } },
          content: { "application/json": { schema: ref("ErrorEnvelope"), examples: {
            transition: { summary: "a move the board does not allow: valid_options lists the statuses it does", value: { error: "transition_illegal", message: "moving from backlog to done is not allowed on board main", field: "status", value: "done", valid_options: ["todo"], hint: "allowed from backlog: todo; force skips the check (CLI: --force; HTTP and tools: force: true)" } },
            stale: { summary: "a write at a version that is not the card's", value: { error: "version_conflict", message: "card card_4d5bc2e221c2bd24 is at version 4", hint: "re-read it and retry with version 4 (the card in this error is the current one); it is unowned now: if you held it, it was released (its history says by whom), so claim it again before you go on" } },
          } } },
        },
        Unavailable: { description: "503 `unavailable`: the database or disk cannot serve the call now (locked, full, replaced); retry. 500 `internal` is a bug.", content: json(ref("ErrorEnvelope")) },
      },
    },
  };
}

function operation(route: Route, doc: OperationDoc): Record<string, unknown> {
  const params: unknown[] = [...route.path.matchAll(/:([a-z_]+)|\*\*:([a-z_]+)/g)].map((m) => ({
    name: m[1] ?? m[2], in: "path", required: true, schema: { type: "string" },
  }));
  for (const [name, description, schema, required] of doc.query ?? []) {
    // a list goes comma-separated: a=x,y
    const list = (schema as { type?: string } | undefined)?.type === "array" ? { style: "form", explode: false } : {};
    params.push({ name, in: "query", required: required === true, description, schema: schema ?? { type: "string" }, ...list });
  }
  // reads resolve `me` by the actor too
  params.push({ $ref: "#/components/parameters/Actor" });
  if (route.method !== "GET") params.push({ $ref: "#/components/parameters/IdempotencyKey" });
  const op: Record<string, unknown> = {
    operationId: doc.id,
    summary: route.summary,
    tags: [doc.tag],
    ...(doc.description || route.serveOnly ? { description: [doc.description, route.serveOnly ? "Available only in serve mode (`cards serve`); the embedded CLI answers serve_only." : ""].filter(Boolean).join(" ") } : {}),
    ...(route.serveOnly ? { "x-serve-only": true } : {}),
    ...(params.length ? { parameters: params } : {}),
  };
  // any media type is taken; application/octet-stream or none has the bytes sniffed
  if (doc.body === "bytes") op.requestBody = { required: true, description: "the artifact's bytes (at most 64 MiB), with their media type as Content-Type", content: { "*/*": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } };
  else if (doc.body) op.requestBody = { required: doc.bodyRequired ?? true, content: { "application/json": { schema: ref(doc.body), ...(doc.examples ? { examples: doc.examples } : {}) } } };
  const ok: Record<string, unknown> = { description: doc.okDescription ?? "Success" };
  // an artifact is answered with its stored type
  if (doc.response === "bytes") ok.content = { "*/*": { schema: { type: "string", description: "the artifact's bytes, with the type it was stored with" } } };
  else if (doc.response === "sse") ok.content = { "text/event-stream": { schema: { type: "string", description: "SSE frames; each `data` is an Event (see the operation's description)" } } };
  else ok.content = json(ref(doc.response));
  if (route.method !== "GET") {
    const headers: Record<string, unknown> = {
      "Idempotent-Replayed": { description: "true when this answer replays an earlier request with the same Idempotency-Key (same actor)", schema: { type: "string", enum: ["true"] } },
    };
    if (doc.dryRun) headers["Dry-Run"] = { description: "true when the request was a dry run: nothing was stored", schema: { type: "string", enum: ["true"] } };
    for (const [name, description] of Object.entries(doc.headers ?? {})) headers[name] = { description, schema: { type: "string" } };
    ok.headers = headers;
  } else if (doc.headers) {
    ok.headers = Object.fromEntries(Object.entries(doc.headers).map(([name, description]) => [name, { description, schema: { type: "string" } }]));
  }
  op.responses = { [String(doc.status ?? 200)]: ok, "4XX": { $ref: "#/components/responses/Error" }, "5XX": { $ref: "#/components/responses/Unavailable" } };
  for (const [status, description] of Object.entries(doc.also ?? {})) (op.responses as Record<string, unknown>)[status] = { ...ok, description };
  return op;
}

/**
 * A valibot shape as JSON Schema. A `v.custom` check (a JSON object of data keys: fields,
 * filter, entry) has no JSON Schema of its own: it is an object whose keys are data.
 */
function valibotSchema(shape: unknown): JsonSchema {
  const s = toJsonSchema(shape as never, {
    target: "draft-2020-12", errorMode: "ignore",
    overrideSchema: (c) => ((c.valibotSchema as { type: string }).type === "custom" ? { type: "object", additionalProperties: true } : undefined),
  }) as JsonSchema;
  delete s.$schema;
  return dropEmptyRequired(s);
}

function dropEmptyRequired(s: JsonSchema): JsonSchema {
  if (Array.isArray(s.required) && s.required.length === 0) delete s.required;
  for (const v of Object.values(s)) if (v && typeof v === "object") dropEmptyRequired(v as JsonSchema);
  return s;
}

/** What the static shapes cannot say: limits the service checks after the shape. */
function describeRequestShapes(schemas: Record<string, JsonSchema>): void {
  const props = (name: string) => (schemas[name]!.properties ?? {}) as Record<string, JsonSchema>;
  props("CommentBody").body = { type: "string", minLength: 1, pattern: "\\S", description: `markdown; not blank; at most 64 KiB of UTF-8 (413 beyond)` };
  props("EntryBody").entry = {
    type: "object", additionalProperties: true,
    description: "the entry's item fields, as the repeating field's items in Card<Type>Fields declare them (without entry_id); on PATCH only the keys to change",
  };
  props("TakeNextBody").filter = { type: "object", additionalProperties: true, description: "a filter expression (docs/filters.md), as a board's default_filter" };
}

const openApiPath = (p: string): string => p.replace(/\*\*:([a-z_]+)/g, "{$1}").replace(/:([a-z_]+)/g, "{$1}");

