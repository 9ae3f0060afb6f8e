import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { EXIT, main } from "../../src/cli/main.js";

function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  return main(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env: {} }).then((code) => ({
    code,
    out,
    err,
  }));
}

describe("autopilot --port and --keep", () => {
  it("rejects a --port that is not a port number, saying what it expects", async () => {
    for (const bad of ["abc", "70000", "-1", "80a"]) {
      const { code, err } = await run(["sandbox", `--port=${bad}`]);
      expect(code).toBe(EXIT.usage);
      expect(err.join("\n")).toMatch(/--port expects a port number from 0 to 65535/);
    }
  });

  it("says which port is taken and exits 2", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, err } = await run(["sandbox", "--quiet", "--port", String(port)]);
      expect(err.join("\n")).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(code).toBe(EXIT.usage);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it("documents both options in the help of start and sandbox", async () => {
    for (const command of ["start", "sandbox"]) {
      const { out } = await run([command, "--help"]);
      expect(out.join("\n")).toMatch(/--port <port>/);
      expect(out.join("\n")).toMatch(/--keep\s/);
    }
  });
});
