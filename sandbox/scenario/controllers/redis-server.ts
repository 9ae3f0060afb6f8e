/**
 * A real Redis server for replicas that share their work (src/app/hosted/replica-work.ts), started by the scenario
 * harness (`controllers: { sharedWork: true }`) and by the tests: Debian's redis-server, which .ci/run installs,
 * on 127.0.0.1 at a free port, keeping nothing on disk, stopped by `stop()`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    "redis-server",
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--loglevel",
      "notice",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${output}`)), 10_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (/Ready to accept connections/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(
        new Error(
          `redis-server could not be started (${error.message}): install Debian's redis-server package, as .ci/run does`,
        ),
      );
    });
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.kill("SIGKILL");
      await exited;
    },
  };
}
