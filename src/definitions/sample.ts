/**
 * The starter workspace `cards init` writes: the files of the repository's
 * `definitions/` folder, bundled into the binary by static imports.
 */
import workspace from "../../definitions/workspace.json" with { type: "json" };
import task from "../../definitions/card-types/task.json" with { type: "json" };
import bug from "../../definitions/card-types/bug.json" with { type: "json" };
import review from "../../definitions/card-types/review.json" with { type: "json" };
import mainBoard from "../../definitions/boards/main.json" with { type: "json" };
import bugsBoard from "../../definitions/boards/bugs.json" with { type: "json" };
import triage from "../../definitions/views/triage.json" with { type: "json" };
import extensions from "../../definitions/extensions.yaml" with { type: "text" };

const json = (x: unknown): string => `${JSON.stringify(x, null, 2)}\n`;

/** Relative path (e.g. "definitions/workspace.json") to file content of the starter workspace. */
export function sampleFiles(): Record<string, string> {
  return {
    "definitions/workspace.json": json(workspace),
    "definitions/card-types/task.json": json(task),
    "definitions/card-types/bug.json": json(bug),
    "definitions/card-types/review.json": json(review),
    "definitions/boards/main.json": json(mainBoard),
    "definitions/boards/bugs.json": json(bugsBoard),
    "definitions/views/triage.json": json(triage),
    "definitions/extensions.yaml": String(extensions),
  };
}
