/**
 * `autopilot serve` checks the App's credentials before it listens, and fails naming the variable: a bad key
 * otherwise surfaces only at the first webhook or tick, as GitHub's 401.
 */
import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { serve } from "../../src/app/hosted/serve.js";
import { EXIT, main } from "../../src/cli/main.js";

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({
  type: "pkcs1",
  format: "pem",
});

function env(extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    APP_ID: "123",
    PRIVATE_KEY: String(rsa).replace(/\n/g, "\\n"),
    WEBHOOK_SECRET: "s3cret",
    PORT: "0",
    AUTOPILOT_TICK_SECONDS: "0",
    LOG_LEVEL: "fatal",
    ...extra,
  };
}

/** serve's refusal; a server that started anyway is stopped, and fails the test. */
async function refusal(extra: NodeJS.ProcessEnv): Promise<string> {
  const result = await serve({ env: env(extra), log: quiet, handleSignals: false }).then(
    async (server) => {
      await server.stop();
      return "serve started";
    },
    (error: Error) => error.message,
  );
  expect(result).not.toBe("serve started");
  return result;
}

describe("autopilot serve's credentials at start", () => {
  it("fails fast on a private key that is not one, naming PRIVATE_KEY", async () => {
    const broken = "-----BEGIN RSA PRIVATE KEY-----\\nbm90IGEga2V5\\n-----END RSA PRIVATE KEY-----";
    expect(await refusal({ PRIVATE_KEY: broken })).toMatch(
      /^PRIVATE_KEY is not the App's private key: it does not parse as a private key/,
    );
    expect(await refusal({ PRIVATE_KEY: Buffer.from("hello").toString("base64") })).toMatch(
      /^PRIVATE_KEY is not the App's private key: it is neither a PEM nor base64 of one/,
    );
    const ed25519 = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" });
    expect(await refusal({ PRIVATE_KEY: String(ed25519) })).toContain(
      "its type is ed25519, and GitHub Apps sign with RSA",
    );
  });

  it("names a PRIVATE_KEY_PATH it cannot read, a non-numeric APP_ID and a missing WEBHOOK_SECRET", async () => {
    expect(await refusal({ PRIVATE_KEY: "", PRIVATE_KEY_PATH: "/nonexistent/app.pem" })).toMatch(
      /^PRIVATE_KEY_PATH \(\/nonexistent\/app\.pem\) cannot be read/,
    );
    expect(await refusal({ APP_ID: "my-app" })).toMatch(/^APP_ID must be the App's numeric id/);
    expect(await refusal({ WEBHOOK_SECRET: "" })).toMatch(/^autopilot serve needs WEBHOOK_SECRET/);
  });

  it("the CLI prints the reason and exits 2 (usage) instead of listening", async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (l: string) => err.push(l), env: env({ PRIVATE_KEY: "not a key" }) };
    expect(await main(["serve"], io)).toBe(EXIT.usage);
    expect(err.join("\n")).toContain("PRIVATE_KEY is not the App's private key");
  });
});
