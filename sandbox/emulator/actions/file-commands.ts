/**
 * The key-value files steps write (`GITHUB_OUTPUT`, `GITHUB_ENV`, `GITHUB_STATE`), read back by the runner, and
 * the small readers of evaluated workflow values.
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands#environment-files
 */

/** Parses `GITHUB_OUTPUT`/`GITHUB_ENV` file contents: `k=v` lines and `k<<DELIM` … `DELIM` blocks. */
export function parseKeyValueFile(text: string): Record<string, string> {
  const result: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line.trim()) continue;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    const eq = line.indexOf("=");
    if (heredoc && (eq < 0 || eq > line.indexOf("<<"))) {
      const key = heredoc[1]!.trim();
      const delimiter = heredoc[2]!;
      const value: string[] = [];
      i++;
      while (i < lines.length && lines[i] !== delimiter) value.push(lines[i++]!);
      if (i >= lines.length) throw new Error(`Matching delimiter not found '${delimiter}'`);
      result[key] = value.join("\n");
    } else if (eq > 0) {
      result[line.slice(0, eq).trim()] = line.slice(eq + 1);
    } else {
      throw new Error(`Invalid format '${line}'`);
    }
  }
  return result;
}

export function minutes(value: unknown): number | null {
  const n = typeof value === "number" ? value : typeof value === "string" ? Number(value) : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n * 60_000 : null;
}

export function truthyFlag(value: unknown): boolean {
  return value === true || (typeof value === "string" && value.toLowerCase() === "true");
}
