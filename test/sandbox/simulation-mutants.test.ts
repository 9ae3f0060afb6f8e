/**
 * The simulation's mutants (sandbox/simulation/mutants/): each still names text that occurs exactly once in its
 * product file, and the loader rewrites a file's TypeScript source as tsx loads it, and refuses a stale mutant
 * rather than run the unmutated product. Whether each mutant is caught is `npm run simulate -- --mutant all`
 * (docs/ARCHITECTURE.md "Mutants"), minutes of worlds, not a CI test.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { MUTANTS, mutantChildOptions, occurrences } from "../../sandbox/simulation/mutants/mutants.js";

const run = promisify(execFile);

describe("the simulation's mutants", () => {
  it("have distinct names, and each one's text occurs exactly once in its product file", () => {
    expect(new Set(MUTANTS.map((m) => m.name)).size).toBe(MUTANTS.length);
    for (const mutant of MUTANTS) expect(occurrences(mutant), mutant.name).toBe(1);
  });

  const dir = mkdtempSync(join(tmpdir(), "sim-mutant-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, "answer.ts");
  // An ES module, as every file of the project is (its package.json's "type").
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(file, "const typed: number = 1;\nexport const answer = typed;\n");
  const load = (find: string) => {
    const mutant = {
      name: "probe",
      subject: "",
      caughtBy: "",
      file,
      find,
      replace: "const typed: number = 2;",
    };
    const { importUrl, env } = mutantChildOptions(mutant);
    // The probe's own file, not a product file: its URL is given as the loader would name it.
    const probeEnv = { ...env, SIM_MUTANT: JSON.stringify({ ...mutant, url: pathToFileURL(file).href }) };
    return run(
      process.execPath,
      [
        "--import",
        importUrl,
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(m.answer);`,
      ],
      { env: probeEnv },
    );
  };

  it("rewrite the TypeScript source of their file as tsx loads it", { timeout: 60_000 }, async () => {
    const { stdout } = await load("const typed: number = 1;");
    expect(stdout.trim()).toBe("2");
  });

  it("refuse to load when their text is no longer in the file", { timeout: 60_000 }, async () => {
    await expect(load("const typed: number = 7;")).rejects.toThrow(/mutant probe: its text occurs 0 times/);
  });
});
