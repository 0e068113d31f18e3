/**
 * How many migrations schema.ts holds: what an up-to-date database records in
 * `PRAGMA user_version`. Apart from the migrations' SQL, so opening a current database
 * (every CLI call) does not load it; a test keeps the two equal.
 */
export const SCHEMA_VERSION = 12;
