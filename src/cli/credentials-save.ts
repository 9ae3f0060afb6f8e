/**
 * Writing the App's credentials once GitHub has created the App. GitHub never shows the private key or the
 * webhook secret again, so a write that fails still hands them to the person: in a file only they can read in
 * the system's temp folder, or, when even that fails, printed once on stdout.
 */
import { closeSync, fchmodSync, fstatSync, mkdtempSync, openSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { existingCredentialsProblem } from "./credentials-target.js";

/** Where the credentials ended up: the `.env` asked for, or the temp file / stdout they were handed over in. */
export type SavedCredentials =
  | { saved: "env"; path: string }
  | { saved: "temp"; path: string; reason: string }
  | { saved: "printed"; reason: string };

/** Appends to `path` (created 0600 when absent), made 0600 before a secret goes in. */
function appendPrivately(path: string, text: string): void {
  const again = existingCredentialsProblem(path);
  if (again) throw new Error(again);
  const fd = openSync(path, "a", 0o600);
  try {
    // An existing file keeps its old mode through open: narrow it before the key is written.
    fchmodSync(fd, 0o600);
    writeSync(fd, fstatSync(fd).size > 0 ? `\n${text}` : text);
  } finally {
    closeSync(fd);
  }
}

/** A new 0700 folder in the temp folder with the credentials in `.env` (0600); its path. */
function writeToTemp(text: string): string {
  const folder = mkdtempSync(join(tmpdir(), "autopilot-credentials-"));
  const path = join(folder, ".env");
  writeFileSync(path, text, { mode: 0o600, flag: "wx" });
  return path;
}

/**
 * Saves `text` (the `.env` lines) to `envPath`; on failure hands it over and tells `io` where, and what to do.
 * Never throws: the credentials exist only in this process.
 */
export function saveCredentials(
  io: { out: (line: string) => void; err: (line: string) => void },
  envPath: string,
  text: string,
): SavedCredentials {
  let reason: string;
  try {
    appendPrivately(envPath, text);
    return { saved: "env", path: envPath };
  } catch (error) {
    reason = (error as Error).message;
  }
  io.err(
    `GitHub created the App, but its credentials could not be written to ${envPath}: ${reason}. GitHub does not show the private key or webhook secret again, so here is where they are:`,
  );
  try {
    const path = writeToTemp(text);
    io.out(`The App's credentials are in ${path} (mode 0600, in a folder only you can open).`);
    io.out(
      `Move it where serve and the workflows read it (mv ${path} ${envPath}, or copy its lines into your .env), keep it out of git, then delete that folder.`,
    );
    return { saved: "temp", path, reason };
  } catch (error) {
    io.out(
      `Writing them to the temp folder failed too (${(error as Error).message}). They are printed here once; copy these lines into a .env now (keep it out of git, mode 0600):`,
    );
    io.out(text);
    return { saved: "printed", reason };
  }
}
