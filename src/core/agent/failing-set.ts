/**
 * What fails when the agent claims COMPLETE and the quality commands disagree, as a set the next contradicted
 * claim is compared with (src/core/agent/iteration.ts): the loop goes on while the set shrinks, and the same
 * claim meeting the same failure again goes to a person.
 *
 * A member is a failing command with one failing test it names, in the forms the common runners print (TAP and
 * node:test, Jest and Vitest, pytest, Go, Cargo, RSpec); a failing command none of whose lines has such a form
 * (a linter, a build, the coverage gate) is one member by itself. Outputs are the ends the gate keeps, so a
 * long run's early failures may be cut off: the set is what both claims show, which is what the agent saw too.
 */

interface FailedCommand {
  command: string;
  passed: boolean;
  output: string;
}

/** One failing test per match, its name in the first group. */
const FAILED_TEST_LINES: readonly RegExp[] = [
  // TAP (node --test's default before Node 22, prove, tap): `not ok 3 - name`
  /^\s*not ok \d+(?: -)? (.+?)(?: # .*)?$/,
  // node:test's spec reporter, Mocha: `✖ name (1.2ms)`
  /^\s*[✖✗] (.+?)(?: \([\d.]+m?s\))?$/,
  // Jest and Vitest: `✕ name (3 ms)`, `× name 3ms`
  /^\s*[✕×] (.+?)(?: \(?\d+(?:\.\d+)? ?m?s\)?)?$/,
  // Jest's and Vitest's headings of a failure: `● suite › name`, `FAIL  file > suite > name`
  /^\s*● (.+)$/,
  /^\s*FAIL\s+(\S.* > .+)$/,
  // pytest's summary: `FAILED tests/test_x.py::test_name - AssertionError`
  /^FAILED (\S+)/,
  // go test: `--- FAIL: TestName (0.00s)`
  /^\s*--- FAIL: (\S+)/,
  // cargo test: `test tests::name ... FAILED`
  /^test (\S+) \.\.\. FAILED$/,
  // RSpec's summary: `rspec ./spec/x_spec.rb:12 # description`
  /^rspec (\.\/\S+)/,
];

/** The members of the failing set of these results (sorted, each once). */
export function failingSet(results: readonly FailedCommand[]): string[] {
  const members = new Set<string>();
  for (const result of results) {
    if (result.passed) continue;
    let named = false;
    for (const line of result.output.split("\n")) {
      for (const form of FAILED_TEST_LINES) {
        const match = form.exec(line.replace(/\r$/, ""));
        if (!match?.[1]) continue;
        members.add(`${result.command} › ${match[1].trim()}`);
        named = true;
        break;
      }
    }
    if (!named) members.add(result.command);
  }
  return [...members].sort();
}

/** Whether `next` is a strict part of `previous`: something was fixed and nothing newly fails. */
export function failingSetShrank(previous: readonly string[], next: readonly string[]): boolean {
  const before = new Set(previous);
  return next.length < before.size && next.every((member) => before.has(member));
}
