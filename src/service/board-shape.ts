/**
 * The board definition's valibot schema, for the OpenAPI document (POST /boards takes a
 * board file). Apart from index.ts: building the definition schemas costs every one-shot
 * CLI command that loads the index, and only the document needs this.
 */
export { BoardSchema } from "../definitions/schemas.ts";
