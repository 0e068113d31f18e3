/** Where a workspace's definitions live (DECISIONS "Workspace on disk"), relative to its root. */
export const DEFINITIONS_DIR = "definitions";
/** Folders of one-definition-per-file JSON files, relative to `definitions/`. */
export const DEFINITION_FOLDERS = ["card-types", "boards", "views"] as const;
export const EXTENSION_FILES = ["extensions.yaml", "extensions.json"] as const;
