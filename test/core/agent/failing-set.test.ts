import { describe, expect, it } from "vitest";
import { failingSet, failingSetShrank } from "../../../src/core/agent/failing-set.js";

const failed = (command: string, output: string) => ({ command, passed: false, output });

describe("the failing set of a contradicted claim", () => {
  it.each([
    [
      "TAP",
      "ok 1 - adds\nnot ok 2 - counts every unit\nnot ok 3 rounds the tax # TODO later",
      ["counts every unit", "rounds the tax"],
    ],
    [
      "node:test's spec reporter",
      "✔ adds (0.4ms)\n✖ counts every unit (1.2ms)\n  AssertionError",
      ["counts every unit"],
    ],
    [
      "Jest",
      "  cart\n    ✓ adds (2 ms)\n    ✕ counts every unit (3 ms)\n\n  ● cart › counts every unit",
      ["cart › counts every unit", "counts every unit"],
    ],
    [
      "Vitest",
      " × counts every unit 4ms\n FAIL  test/cart.test.ts > cart > counts every unit",
      ["counts every unit", "test/cart.test.ts > cart > counts every unit"],
    ],
    [
      "pytest",
      "FAILED tests/test_cart.py::test_units - AssertionError: 2 != 3\n1 failed, 3 passed",
      ["tests/test_cart.py::test_units"],
    ],
    ["go test", "=== RUN   TestUnits\n--- FAIL: TestUnits (0.00s)\nFAIL", ["TestUnits"]],
    ["cargo test", "test cart::adds ... ok\ntest cart::units ... FAILED", ["cart::units"]],
    ["RSpec", "rspec ./spec/cart_spec.rb:12 # Cart counts every unit", ["./spec/cart_spec.rb:12"]],
  ])("names each failing test %s prints", (_runner, output, names) => {
    expect(failingSet([failed("make test", output)])).toEqual(names.map((n) => `make test › ${n}`).sort());
  });

  it("counts a failing command that names no test (a linter, the coverage gate) as one member", () => {
    expect(
      failingSet([
        failed("npm run lint", "src/cart.js\n  3:7  error  'x' is assigned a value but never used"),
        { command: "npm test", passed: true, output: "not ok 1 - from a passing run, ignored" },
      ]),
    ).toEqual(["npm run lint"]);
  });

  it("shrinks only when something was fixed and nothing newly fails", () => {
    expect(failingSetShrank(["a", "b"], ["a"])).toBe(true);
    expect(failingSetShrank(["a", "b"], ["a", "b"])).toBe(false);
    expect(failingSetShrank(["a", "b"], ["a", "c"])).toBe(false);
    expect(failingSetShrank(["a"], [])).toBe(true);
    expect(failingSetShrank([], [])).toBe(false);
  });
});
