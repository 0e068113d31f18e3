/**
 * GET /v1/openapi.json: OpenAPI 3.1 generated from the live workspace. Paths come from the
 * shared route table (plus the SSE stream), static request shapes from the valibot
 * schemas, and per-type create/update bodies from the field definitions.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import { ROUTES, VERSION, type Route } from "./routes.ts";
import { REQUEST_SHAPES, fieldSchema, obj, statusesOf, tagsSchema, type JsonSchema, type Service } from "../service/index.ts";
import { OPERATIONS, type OperationDoc } from "./openapi-ops.ts";
import { COMPONENTS } from "./openapi-components.ts";

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonSchema) => ({ "application/json": { schema } });
/**
 * A title as validateTitle takes it: not blank, one line once trimmed. JSON Schema counts
 * characters, the server counts bytes: maxLength is the most a title can be (1,024 ASCII
 * characters), and the description says the rest.
 */
const TITLE_SCHEMA: JsonSchema = {
  type: "string", minLength: 1, maxLength: 1024, pattern: "\\S",
  description: "one line, not blank, no control characters (C0, DEL, C1); surrounding spaces are trimmed; at most 1,024 bytes of UTF-8 (413 beyond)",
};

/** The OpenAPI document for the definitions live now. */
export function openApiDocument(svc: Service, serverUrl?: string): Record<string, unknown> {
  const defs = svc.defs;
  const schemas: Record<string, JsonSchema> = { ...COMPONENTS };
  for (const [name, shape] of Object.entries(REQUEST_SHAPES)) schemas[name] = valibotSchema(shape());
  const creates: JsonSchema[] = [];
  const updates: JsonSchema[] = [];
  const mapping: Record<string, string> = {};
  // card type ids such as my-type and my_type (or card_body, next to CreateCardBody) would
  // name the same components: a later one gets a number
  const taken = new Set([...Object.keys(schemas), "CardBody"].flatMap((n) => [n, n.replace(/^(Create|Update|Fields)/, "")]));
  for (const type of defs.cardTypes.values()) {
    let key = pascal(type.id);
    for (let n = 2; taken.has(key); n++) key = `${pascal(type.id)}${n}`;
    taken.add(key);
    const props: Record<string, JsonSchema> = {};
    for (const f of type.fields) props[f.id] = fieldSchema(f, defs);
    const required = type.fields.filter((f) => f.required && f.default === undefined).map((f) => f.id);
    schemas[`Fields${key}`] = { ...obj(props, required, `Fields of a ${type.name} card (schema_version ${type.schema_version})`), additionalProperties: !defs.workspace.settings.strict_fields };
    const statuses = statusesOf(type, defs);
    schemas[`Create${key}`] = {
      ...obj({
        type_id: { type: "string", const: type.id },
        title: TITLE_SCHEMA,
        status: { type: "string", enum: statuses, description: `default ${statuses[0]}` },
        fields: ref(`Fields${key}`),
        tags: tagsSchema(defs),
        schema_version: { type: "integer", const: type.schema_version },
        dry_run: { type: "boolean" },
      }, required.length ? ["type_id", "title", "fields"] : ["type_id", "title"], `Create a ${type.name} card`),
      additionalProperties: false,
    };
    const patchProps: Record<string, JsonSchema> = {};
    // null removes a key (SPEC PATCH), whatever the field's type
    for (const f of type.fields) if (f.type !== "repeating") patchProps[f.id] = { anyOf: [fieldSchema(f, defs), { type: "null" }] };
    schemas[`Update${key}`] = {
      ...obj({
        version: { type: "integer", minimum: 1, description: "the version you read" },
        title: TITLE_SCHEMA,
        status: { type: "string", enum: statuses },
        owner: { type: ["string", "null"], description: "a registered user; empty or null clears" },
        tags: tagsSchema(defs),
        fields: { ...obj(patchProps, [], "keys to change; null removes a key"), additionalProperties: !defs.workspace.settings.strict_fields },
        force: { type: "boolean" },
        dry_run: { type: "boolean" },
      }, ["version"], `Update a ${type.name} card`),
      additionalProperties: false,
    };
    creates.push(ref(`Create${key}`));
    mapping[type.id] = `#/components/schemas/Create${key}`;
    updates.push(ref(`Update${key}`));
  }
  schemas.CreateCardBody = { oneOf: creates, discriminator: { propertyName: "type_id", mapping } };
  schemas.PatchCardBody = { anyOf: updates };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    if (route.path === "/openapi.json") continue; // the document covers every route but itself
    const doc = OPERATIONS[`${route.method} ${route.path}`];
    if (!doc) throw new Error(`no OpenAPI description for ${route.method} ${route.path}`);
    const path = openApiPath(route.path);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, doc);
  }
  paths["/events/stream"] = { get: operation({ method: "GET", path: "/events/stream", summary: "Server-Sent Events: live events, resumable" } as Route, OPERATIONS["GET /events/stream"]!) };

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
        Actor: { name: "X-Service-Actor", in: "header", required: false, schema: { type: "string" }, description: "who acts (writes); falls back to CARDS_ACTOR, then settings.default_user" },
        IdempotencyKey: { name: "Idempotency-Key", in: "header", required: false, schema: { type: "string", minLength: 1, maxLength: 255 }, description: "replays the stored answer of the first request with this key" },
      },
      responses: {
        Error: { description: "The error envelope", content: json(ref("ErrorEnvelope")) },
        Unavailable: { description: "503 `unavailable`: the database or disk cannot serve the call now (locked, full, replaced); retry. 500 `internal` is a bug.", content: json(ref("ErrorEnvelope")) },
      },
    },
  };
}

function operation(route: Route, doc: OperationDoc): Record<string, unknown> {
  const params: unknown[] = [...route.path.matchAll(/:([a-z_]+)|\*\*:([a-z_]+)/g)].map((m) => ({
    name: m[1] ?? m[2], in: "path", required: true, schema: { type: "string" },
  }));
  for (const [name, description, schema] of doc.query ?? []) params.push({ name, in: "query", required: false, description, schema: schema ?? { type: "string" } });
  if (route.method !== "GET") params.push({ $ref: "#/components/parameters/Actor" }, { $ref: "#/components/parameters/IdempotencyKey" });
  const op: Record<string, unknown> = {
    operationId: doc.id,
    summary: route.summary,
    tags: [doc.tag],
    ...(route.serveOnly ? { description: "Available only in serve mode (`cards serve`); the embedded CLI answers serve_only.", "x-serve-only": true } : {}),
    ...(params.length ? { parameters: params } : {}),
  };
  if (doc.body === "bytes") op.requestBody = { required: true, content: { "application/octet-stream": { schema: { type: "string", contentMediaType: "application/octet-stream" } } } };
  else if (doc.body) op.requestBody = { required: doc.bodyRequired ?? true, content: json(ref(doc.body)) };
  const ok: Record<string, unknown> = { description: doc.okDescription ?? "Success" };
  // an artifact is answered with its stored type
  if (doc.response === "bytes") ok.content = { "*/*": { schema: { type: "string", description: "the artifact's bytes, with the type it was stored with" } } };
  else if (doc.response === "sse") ok.content = { "text/event-stream": { schema: { type: "string", description: "SSE frames: `event: <type>`, `id: <event id>` (durable events only), `data: <event JSON>`" } } };
  else ok.content = json(ref(doc.response));
  if (route.method !== "GET") {
    const headers: Record<string, unknown> = {
      "Idempotent-Replayed": { description: "true when this answer replays an earlier request with the same Idempotency-Key (same actor)", schema: { type: "string", enum: ["true"] } },
    };
    if (doc.dryRun) headers["Dry-Run"] = { description: "true when the request was a dry run: nothing was stored", schema: { type: "string", enum: ["true"] } };
    for (const [name, description] of Object.entries(doc.headers ?? {})) headers[name] = { description, schema: { type: "string" } };
    ok.headers = headers;
  }
  op.responses = { [String(doc.status ?? 200)]: ok, "4XX": { $ref: "#/components/responses/Error" }, "5XX": { $ref: "#/components/responses/Unavailable" } };
  for (const [status, description] of Object.entries(doc.also ?? {})) (op.responses as Record<string, unknown>)[status] = { ...ok, description };
  return op;
}

function valibotSchema(shape: unknown): JsonSchema {
  const s = toJsonSchema(shape as never, { target: "draft-2020-12", errorMode: "ignore" }) as JsonSchema;
  delete s.$schema;
  return s;
}

const openApiPath = (p: string): string => p.replace(/\*\*:([a-z_]+)/g, "{$1}").replace(/:([a-z_]+)/g, "{$1}");
const pascal = (id: string): string => id.split(/[-_]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
