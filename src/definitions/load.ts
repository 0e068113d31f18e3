/**
 * Loading a workspace's definitions: read the files, parse them, check each
 * file's shape (schemas.ts), the field rules (fielddefs.ts) and the
 * cross-references (crossrefs.ts), collecting every problem. Any problem throws
 * one `invalid_definitions` CardsError carrying all of them.
 */
import type { DefinitionProblem } from "../domain/errors.ts";
import type { Board, CardType, Definitions, ExtensionDef, View, WorkspaceDef } from "../domain/types.ts";
import { checkCrossRefs, type Parsed, type ParsedSet } from "./crossrefs.ts";
import { validateShape } from "./issues.ts";
import { parseJsonText, parseYamlText } from "./parse.ts";
import { definitionsError, Problems } from "./problems.ts";
import { fingerprintFiles, readDefinitionFiles, type DefinitionFiles } from "./read.ts";
import { DEFINITIONS_DIR } from "./paths.ts";
import { BoardSchema, CardTypeSchema, ExtensionsSchema, ViewSchema, WorkspaceSchema } from "./schemas.ts";
import type * as v from "valibot";

export { definitionsError, formatProblems } from "./problems.ts";
export { definitionsFingerprint, fingerprintFiles, readDefinitionFiles } from "./read.ts";

const WORKSPACE_FILE = `${DEFINITIONS_DIR}/workspace.json`;
const EXT_YAML = `${DEFINITIONS_DIR}/extensions.yaml`;
const EXT_JSON = `${DEFINITIONS_DIR}/extensions.json`;

function parseFile(file: string, text: string, schema: v.GenericSchema, problems: Problems, yaml = false): Parsed {
  const nameId = (file.split("/").at(-1) ?? file).replace(/\.(json|ya?ml)$/, "");
  const report = problems.for(file);
  const parsed = yaml ? parseYamlText(text) : parseJsonText(text);
  if (!parsed.ok) {
    for (const e of parsed.errors) report([], e);
    return { file, nameId, value: undefined };
  }
  if (parsed.locate) problems.locate(file, parsed.locate);
  // an empty or all-comment extensions file declares no extensions
  const input = yaml && parsed.value == null ? [] : parsed.value;
  return { file, nameId, value: validateShape(schema, input, report).output };
}

function folder(files: DefinitionFiles, name: string): string[] {
  const prefix = `${DEFINITIONS_DIR}/${name}/`;
  return [...files.keys()].filter((f) => f.startsWith(prefix) && f.endsWith(".json") && !f.slice(prefix.length).includes("/"));
}

function byId<T extends { id: string }>(items: Parsed[]): Map<string, T> {
  const list = items.map((p) => p.value as T).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return new Map(list.map((x) => [x.id, x]));
}

/**
 * Validates an in-memory set of definition files (paths relative to the
 * workspace root, e.g. "definitions/boards/main.json") and builds the
 * Definitions. Throws `invalid_definitions` with every problem found.
 */
export function parseDefinitions(files: DefinitionFiles | Record<string, string>, misnamed: DefinitionProblem[] = []): Definitions {
  const map: DefinitionFiles = files instanceof Map ? files : new Map(Object.entries(files));
  const problems = new Problems();
  for (const p of misnamed) problems.add(p.file, p.path, p.message);
  const set: ParsedSet = { cardTypes: [], boards: [], views: [] };
  const wsText = map.get(WORKSPACE_FILE);
  if (wsText === undefined) {
    problems.add(WORKSPACE_FILE, "", `${WORKSPACE_FILE} is missing; run \`cards init\` to create a starter workspace`);
  } else set.workspace = parseFile(WORKSPACE_FILE, wsText, WorkspaceSchema, problems);
  for (const f of folder(map, "card-types")) set.cardTypes.push(parseFile(f, map.get(f) as string, CardTypeSchema, problems));
  for (const f of folder(map, "boards")) set.boards.push(parseFile(f, map.get(f) as string, BoardSchema, problems));
  for (const f of folder(map, "views")) set.views.push(parseFile(f, map.get(f) as string, ViewSchema, problems));
  const yamlText = map.get(EXT_YAML);
  const jsonText = map.get(EXT_JSON);
  if (yamlText !== undefined && jsonText !== undefined) {
    problems.add(EXT_JSON, "", "both extensions.yaml and extensions.json exist; keep only one of them");
  }
  if (yamlText !== undefined) set.extensions = parseFile(EXT_YAML, yamlText, ExtensionsSchema, problems, true);
  else if (jsonText !== undefined) set.extensions = parseFile(EXT_JSON, jsonText, ExtensionsSchema, problems);

  checkCrossRefs(set, problems);
  if (problems.size > 0) throw definitionsError(problems.sorted());

  const workspace = set.workspace?.value as WorkspaceDef;
  const boards = byId<Board>(set.boards);
  const defaultBoardId = workspace.settings.default_board ?? [...boards.keys()][0];
  const defs: Definitions = {
    workspace,
    cardTypes: byId<CardType>(set.cardTypes),
    boards,
    views: byId<View>(set.views),
    extensions: (set.extensions?.value as ExtensionDef[] | undefined) ?? [],
    fingerprint: fingerprintFiles(map),
  };
  if (defaultBoardId !== undefined) defs.defaultBoardId = defaultBoardId;
  return defs;
}

/**
 * Reads and validates `<root>/definitions`. Throws CardsError `invalid_definitions`
 * whose `extra.problems` lists every problem (file, JSON path, message, valid_options).
 */
export async function loadDefinitions(root: string): Promise<Definitions> {
  const { files, problems, misnamed } = await readDefinitionFiles(root);
  if (problems.length > 0) throw definitionsError(problems);
  return parseDefinitions(files, misnamed);
}
