/**
 * What the worker writes to the job log. What the agent and the quality commands print is untrusted: it reaches
 * the log between `::stop-commands::<token>` and `::<token>::`, GitHub's way of showing output that must not run
 * workflow commands (https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#stopping-and-starting-workflow-commands):
 * while stopped, the runner runs no command but the one that names the token. The token is 128 random bits drawn
 * once per job, written only on the two marker lines (the runner masks it there), so the agent cannot know it;
 * and every line inside is escaped as well (log-text.ts), so that even text that held the token could not end
 * the block: the resume line is a command like any other, and no escaped line is one.
 *
 * Each block is written whole, in one write, so the worker's own commands (a warning, a mask) never fall inside
 * one and go unrun. The agent's lines come one at a time: they are held and written as one block when more
 * arrive than a block holds, after a short pause, or before anything else is written (order kept). A message of
 * the worker's that spans lines (the output of a setup command) is such a block too; its one-line messages,
 * which quote the agent at most, are escaped only.
 *
 * Each iteration's output is folded in a group (`::group::` … `::endgroup::`,
 * https://docs.github.com/actions/reference/workflows-and-actions/workflow-commands#grouping-log-lines). The
 * worker opens and ends groups only between blocks: `group` and `endGroup` first write what is held, closed by
 * its token, so a group marker is never inside a stopped region (where the runner would not run it). The agent
 * cannot end the worker's group: its `::endgroup::` is escaped and fenced like any other line of its output.
 * The runner does not nest groups, so opening one ends the one open before it.
 */
import { randomBytes } from "node:crypto";
import * as core from "@actions/core";
import { safeLogText } from "./log-text.js";
import type { WorkerLog } from "./worker-deps.js";

export interface JobLog extends WorkerLog {
  /** A line the agent printed: written inside a stop-commands block, with the lines around it. */
  output(line: string): void;
  /** Writes what `output` still holds. */
  flush(): void;
}

/** Where the log goes: the job's stdout and @actions/core's commands (tests: a recorder). */
export interface LogSink {
  write(text: string): void;
  debug(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  startGroup(title: string): void;
  endGroup(): void;
}

const STDOUT: LogSink = {
  write: (text) => void process.stdout.write(text),
  debug: (message) => core.debug(message),
  warning: (message) => core.warning(message),
  error: (message) => core.error(message),
  startGroup: (title) => core.startGroup(title),
  endGroup: () => core.endGroup(),
};

/** Lines of output held at most before they are written. */
const BLOCK_LINES = 200;
/** How long a line of output waits at most for others to share its block. */
const BLOCK_WAIT_MS = 200;

export function createJobLog(sink: LogSink = STDOUT): JobLog {
  const token = randomBytes(16).toString("hex");
  const fenced = (escaped: string[]) => `::stop-commands::${token}\n${escaped.join("\n")}\n::${token}::\n`;
  let held: string[] = [];
  let timer: NodeJS.Timeout | null = null;
  let groupOpen = false;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (held.length === 0) return;
    const lines = held;
    held = [];
    sink.write(fenced(lines));
  };
  return {
    output(line) {
      held.push(safeLogText(line));
      if (held.length >= BLOCK_LINES) flush();
      else timer ??= setTimeout(flush, BLOCK_WAIT_MS);
    },
    flush,
    group(title) {
      flush();
      if (groupOpen) sink.endGroup();
      // One line: the title is the worker's own text, but a line break in it would end the command early.
      sink.startGroup(safeLogText(title.replace(/[\r\n\u0085\u2028\u2029]+/g, " "), 200));
      groupOpen = true;
    },
    endGroup() {
      flush();
      if (!groupOpen) return;
      sink.endGroup();
      groupOpen = false;
    },
    info(message) {
      flush();
      if (/[\r\n]/.test(message)) sink.write(fenced([safeLogText(message)]));
      else sink.write(`${safeLogText(message)}\n`);
    },
    debug(message) {
      flush();
      sink.debug(safeLogText(message));
    },
    warning(message) {
      flush();
      sink.warning(safeLogText(message));
    },
    error(message) {
      flush();
      sink.error(safeLogText(message));
    },
  };
}
