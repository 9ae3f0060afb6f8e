/**
 * The programs the worker starts (git, sh, setpriv, sudo, chown, …), found only where nobody but root or the
 * worker's own user can change them. The worker's PATH is not its own to trust: `npm run` puts the
 * `node_modules/.bin` of every parent directory on it, so a checkout under /tmp has `/tmp/node_modules/.bin` there,
 * which any user (the agent's included) can create; self-hosted runners and tool caches add directories other
 * users can write. A program found in such a directory would run as the worker, beside its token.
 *
 * A directory is trusted when it and every directory above it can be changed only by root or the worker's uid:
 * each is owned by one of them and is writable neither by its group nor by others (an ACL granting someone
 * write shows as a group write bit, its mask, so it is refused too). One exception: a world- or group-writable
 * directory with the sticky bit (/tmp) may lie ON THE WAY, because in a sticky directory only an entry's owner (or
 * the directory's owner, or root) may rename or remove it; so when the next component is owned by root or the
 * worker, nobody else can replace it, and what lies below is as safe as it. The directory searched itself is
 * never accepted writable by others, sticky or not: anyone could add a new name (`git`) to it. A file found is
 * trusted when it is owned by root or the worker and writable neither by group nor by others. Symbolic links are
 * followed one by one (who may replace the link depends on the directory holding it, which is checked; then the
 * target's whole path is checked the same way from the root), so `/bin -> usr/bin` is fine and a link into a
 * directory another user can write is not.
 *
 * Each PATH directory's verdict is cached for the life of the process (one job): a directory judged untrusted
 * stays ignored even if it later looks different, and a trusted one can change only by root or the worker.
 * Entries that are not absolute (empty, `.`, relative: "the current directory") are ignored too.
 */
import { accessSync, constants, lstatSync, readlinkSync, type Stats } from "node:fs";
import path from "node:path";

type Verdict =
  | { trusted: true }
  | {
      trusted: false;
      why: string;
      /** Nothing to report: a directory that does not exist where only root or the worker could create it. */
      quiet?: boolean;
    };

/** Where programs are also looked for after the trusted PATH entries (each checked the same way). */
const SYSTEM_DIRS = ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

const WRITABLE_BY_OTHERS = 0o022;
const STICKY = 0o1000;
/** Links followed while checking one path, as the kernel's own limit (ELOOP) for path resolution. */
const MAX_LINKS = 40;

function components(absolute: string): string[] {
  return absolute.split("/").filter((part) => part !== "" && part !== ".");
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/**
 * Whether `target` (absolute) names a directory (`kind: "directory"`) or a file nobody but the uids in `owners`
 * (root and the worker) can change, walking it from the root and following links as described above.
 */
export function pathVerdict(
  target: string,
  kind: "directory" | "file",
  owners: ReadonlySet<number>,
): Verdict {
  if (!path.isAbsolute(target)) return { trusted: false, why: "not an absolute path" };
  const owner = (stats: Stats) =>
    owners.has(stats.uid) ? null : `owned by uid ${stats.uid}, neither root nor the worker's user`;
  let rest = components(target);
  let at = "/";
  let links = 0;
  const rootStats = lstatOrNull("/");
  if (!rootStats) return { trusted: false, why: "/ cannot be read" };
  // Whether `at` is a sticky directory others can write: then only an entry owned by root or the worker holds.
  let stickyOpen = false;
  const rootProblem = owner(rootStats);
  if (rootProblem) return { trusted: false, why: `/ is ${rootProblem}` };
  if (rootStats.mode & WRITABLE_BY_OTHERS) {
    if (!(rootStats.mode & STICKY) || rest.length === 0)
      return { trusted: false, why: "/ is writable by group or others" };
    stickyOpen = true;
  }
  while (rest.length > 0) {
    const name = rest.shift()!;
    if (name === "..") {
      // `at` holds no link (every link was resolved), so its parent is its textual parent: start again from
      // the root, so that the parent's own verdict (sticky or not) is taken afresh.
      rest = components(path.join(path.dirname(at), ...rest));
      at = "/";
      stickyOpen = (rootStats.mode & WRITABLE_BY_OTHERS) !== 0;
      continue;
    }
    const entry = path.join(at, name);
    const stats = lstatOrNull(entry);
    if (!stats) {
      // Nothing to run there today; worth a word only if someone else could make it tomorrow.
      return stickyOpen
        ? { trusted: false, why: `does not exist, and any user may create ${entry} in ${at}` }
        : { trusted: false, why: `${entry} does not exist`, quiet: true };
    }
    const ownerProblem = owner(stats);
    if (ownerProblem) return { trusted: false, why: `${entry} is ${ownerProblem}` };
    if (stats.isSymbolicLink()) {
      if (++links > MAX_LINKS) return { trusted: false, why: `too many symbolic links at ${entry}` };
      const resolved = path.resolve(at, readlinkSync(entry));
      rest = components(path.join(resolved, ...rest));
      at = "/";
      stickyOpen = (rootStats.mode & WRITABLE_BY_OTHERS) !== 0;
      continue;
    }
    const last = rest.length === 0;
    const writable = (stats.mode & WRITABLE_BY_OTHERS) !== 0;
    if (stats.isDirectory()) {
      if (last && kind === "file") return { trusted: false, why: `${entry} is a directory` };
      if (writable) {
        if (last || !(stats.mode & STICKY))
          return { trusted: false, why: `${entry} is writable by group or others` };
        stickyOpen = true;
      } else {
        stickyOpen = false;
      }
      at = entry;
      continue;
    }
    if (!last) return { trusted: false, why: `${entry} is not a directory` };
    if (kind === "directory") return { trusted: false, why: `${entry} is not a directory` };
    if (!stats.isFile()) return { trusted: false, why: `${entry} is not a regular file` };
    if (writable) return { trusted: false, why: `${entry} is writable by group or others` };
    return { trusted: true };
  }
  return kind === "directory" ? { trusted: true } : { trusted: false, why: `${target} is a directory` };
}

/** A PATH entry the worker does not search, and why. */
interface IgnoredEntry {
  entry: string;
  why: string;
  quiet: boolean;
}

/** The uids whose files the worker trusts: root and its own (effective) uid. */
function trustedOwners(): ReadonlySet<number> {
  return new Set([0, process.geteuid?.() ?? process.getuid?.() ?? 0]);
}

const sharedVerdicts = new Map<string, Verdict>();

/** Programs looked up in the trusted directories of one PATH (see the top of this file). */
export class TrustedBinaries {
  /** The trusted directories searched, in order: PATH's, then SYSTEM_DIRS not already among them. */
  readonly dirs: readonly string[];
  /** The PATH entries not searched, in PATH's order, each once. */
  readonly ignored: readonly IgnoredEntry[];
  private readonly found = new Map<string, string | null>();
  /** By name, the files found but not trusted (and why), for `require`'s error. */
  private readonly passedOver = new Map<string, string[]>();

  constructor(
    pathVar: string | undefined,
    private readonly options: {
      owners?: ReadonlySet<number>;
      /** Directory verdicts by path; the process-wide cache when absent. */
      cache?: Map<string, Verdict>;
    } = {},
  ) {
    const owners = options.owners ?? trustedOwners();
    const cache = options.cache ?? sharedVerdicts;
    const verdict = (dir: string): Verdict => {
      const key = `${[...owners].join(",")}\0${dir}`;
      let known = cache.get(key);
      if (!known) {
        known = pathVerdict(dir, "directory", owners);
        cache.set(key, known);
      }
      return known;
    };
    const dirs: string[] = [];
    const ignored: IgnoredEntry[] = [];
    const seen = new Set<string>();
    for (const entry of (pathVar ?? "").split(path.delimiter)) {
      if (seen.has(entry)) continue;
      seen.add(entry);
      if (!path.isAbsolute(entry)) {
        ignored.push({
          entry,
          why: "not an absolute path (it means the directory a program runs in)",
          quiet: false,
        });
        continue;
      }
      const judged = verdict(entry);
      if (judged.trusted) dirs.push(entry);
      else ignored.push({ entry, why: judged.why, quiet: judged.quiet === true });
    }
    for (const dir of SYSTEM_DIRS) {
      if (seen.has(dir)) continue;
      seen.add(dir);
      if (verdict(dir).trusted) dirs.push(dir);
    }
    this.dirs = dirs;
    this.ignored = ignored;
  }

  /** The absolute path of the first trusted executable `name` in the trusted directories, or null. */
  find(name: string): string | null {
    if (!name || name.includes("/")) throw new Error(`not a program name: ${JSON.stringify(name)}`);
    if (this.found.has(name)) return this.found.get(name)!;
    const owners = this.options.owners ?? trustedOwners();
    let hit: string | null = null;
    for (const dir of this.dirs) {
      const file = path.join(dir, name);
      if (!lstatOrNull(file)) continue;
      // A file there that someone else can change (or a link to one) is passed over, not run.
      const judged = pathVerdict(file, "file", owners);
      if (!judged.trusted) {
        this.passedOver.set(name, [...(this.passedOver.get(name) ?? []), `${file} (${judged.why})`]);
        continue;
      }
      try {
        accessSync(file, constants.X_OK);
      } catch {
        continue;
      }
      hit = file;
      break;
    }
    this.found.set(name, hit);
    return hit;
  }

  /** Like `find`, or an error naming where it looked and what it passed over. */
  require(name: string): string {
    const hit = this.find(name);
    if (hit) return hit;
    const mine = this.passedOver.get(name) ?? [];
    const notes = [
      `searched ${this.dirs.join(", ") || "nothing"}`,
      ...(mine.length ? [`passed over ${mine.join(", ")}`] : []),
      ...(this.ignored.some((i) => !i.quiet) ? [`ignored ${ignoredText(this.ignored)}`] : []),
    ];
    throw new Error(
      `${name} was not found in a directory only root or the worker's user can write (${notes.join("; ")}). ` +
        `Install ${name} from the system's packages (e.g. under /usr/bin).`,
    );
  }

  /** A PATH of the trusted directories only, for the worker's own child processes (git looks programs up). */
  get searchPath(): string {
    return this.dirs.join(path.delimiter);
  }
}

function ignoredText(ignored: readonly IgnoredEntry[]): string {
  return ignored
    .filter((i) => !i.quiet)
    .map((i) => `${i.entry || '""'} (${i.why})`)
    .join(", ");
}

const byPath = new Map<string, TrustedBinaries>();

/** The worker's trusted programs for this PATH (the worker's own, by default); one per PATH for the process. */
export function workerBinaries(pathVar: string | undefined = process.env.PATH): TrustedBinaries {
  const key = pathVar ?? "";
  let binaries = byPath.get(key);
  if (!binaries) {
    binaries = new TrustedBinaries(pathVar);
    byPath.set(key, binaries);
  }
  return binaries;
}

/** The worker's `name` from a trusted directory of its own PATH, or null. */
export function trustedBinary(name: string): string | null {
  return workerBinaries().find(name);
}

/** The shell the worker starts commands with (`sh -c`), from a trusted directory. */
export function trustedShell(): string {
  return workerBinaries().require("sh");
}

const reported = new Set<string>();

/**
 * Names in the log, once per process, the PATH entries the worker ignores (and why), so a tool that is "on
 * PATH" yet not run is explained. Entries that do not exist where only root or the worker could make them are
 * left out: they hide nothing.
 */
export function reportIgnoredPath(pathVar: string | undefined, log: (message: string) => void): void {
  const fresh = workerBinaries(pathVar).ignored.filter((i) => !i.quiet && !reported.has(i.entry));
  if (fresh.length === 0) return;
  for (const i of fresh) reported.add(i.entry);
  log(
    `the worker ignores these PATH entries and runs no program from them, because a user other than root or ` +
      `the worker's own could change what they hold: ${ignoredText(fresh)} (docs/WORKER.md, "Which programs the worker runs")`,
  );
}
