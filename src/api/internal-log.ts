/**
 * How an error no rule expected (a bug, or a fault below our code) is logged: one line
 * naming where it happened and what it said, so a log read line by line stays readable
 * (Bun's own print of an error is ~18 lines of minified source and a stack). The stack
 * follows on the same line only with CARDS_DEBUG=1. A server logs through its logger
 * (`[error] ...`); elsewhere the line goes to stderr.
 */
let sink: (line: string) => void = (line) => console.error(line);
let withStack = false;

/** Where internal errors are logged, and whether their stack goes with them. */
export function setInternalErrorLog(log: (line: string) => void, stack = false): void {
  sink = log;
  withStack = stack;
}

/** One line: `internal error in WHERE: Name: message` (and ` | stack` with CARDS_DEBUG=1). */
export function logInternalError(e: unknown, where?: string): void {
  const err = e instanceof Error ? e : undefined;
  const what = err ? `${err.name}: ${err.message}` : String(e);
  const stack = withStack && err?.stack ? ` | ${err.stack.split("\n").slice(1).map((l) => l.trim()).join(" < ")}` : "";
  sink(`internal error${where ? ` in ${where}` : ""}: ${what.replace(/\s*\n\s*/g, " ")}${stack}`);
}
