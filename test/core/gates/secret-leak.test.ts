import { describe, expect, it } from "vitest";
import { describeSecretLeak, findSecretLeaks, type HeldSecret } from "../../../src/core/gates/secret-leak.js";

const KEY = "sk-ant-api03-Zq7/x+Y9w=Kp2Lm8Nv4Rt6";
const SECRETS: HeldSecret[] = [{ name: "ANTHROPIC_API_KEY", value: KEY }];

/** A one-file diff adding `lines` to `file`. */
function addedDiff(file: string, lines: string[]): string {
  return [
    `diff --git a/${file} b/${file}`,
    "new file mode 100644",
    "--- /dev/null",
    `+++ b/${file}`,
    `@@ -0,0 +1,${lines.length} @@`,
    ...lines.map((l) => `+${l}`),
  ].join("\n");
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
const b64url = (text: string) => Buffer.from(text).toString("base64url");

describe("findSecretLeaks", () => {
  it("finds the plain value and names the file, the line and the secret, never the value", () => {
    const found = findSecretLeaks(
      addedDiff("src/config.ts", ["// config", `const key = "${KEY}";`]),
      SECRETS,
    );
    expect(found.leaks).toEqual([
      { path: "src/config.ts", line: 2, secret: "ANTHROPIC_API_KEY", form: "plain" },
    ]);
    expect(JSON.stringify(found)).not.toContain(KEY);
    expect(describeSecretLeak(found.leaks[0]!)).toBe(
      "`src/config.ts` line 2: the value of ANTHROPIC_API_KEY",
    );
  });

  it("finds the value base64-encoded on its own and at each of the three offsets inside a longer stream", () => {
    for (const prefix of ["", "u", "us", "use", "x-access-token:"]) {
      const found = findSecretLeaks(addedDiff("auth.txt", [b64(`${prefix}${KEY}`)]), SECRETS);
      expect(
        found.leaks.map((l) => l.form),
        prefix,
      ).toEqual(["base64"]);
    }
  });

  it("finds base64url, and a base64 stream wrapped over several lines", () => {
    // `>`, `?` and `~` encode to `+` and `/` in base64: `-` and `_` in base64url, at every offset.
    const value = "p>?~q>?~r>?~s>?~";
    const forms = ["", "i", "id"].map(
      (prefix) =>
        findSecretLeaks(addedDiff("a.txt", [b64url(`${prefix}${value}`)]), [{ name: "V", value }]).leaks[0]
          ?.form,
    );
    expect(forms).toEqual(["base64url", "base64url", "base64url"]);
    const stream = b64(`${"x".repeat(50)}${KEY}${"y".repeat(50)}`);
    const wrapped = stream.match(/.{1,20}/g)!;
    const found = findSecretLeaks(addedDiff("blob.pem", wrapped), SECRETS);
    expect(found.leaks).toHaveLength(1);
    expect(found.leaks[0]).toMatchObject({ form: "base64", path: "blob.pem" });
  });

  it("finds the value URL-encoded by any encoder: encodeURIComponent, form encoding, every byte, lower-case hex", () => {
    const encodings = [
      encodeURIComponent(KEY),
      new URLSearchParams({ k: KEY }).toString(),
      Array.from(Buffer.from(KEY), (b) => `%${b.toString(16).padStart(2, "0")}`).join(""),
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (percent) => percent.toLowerCase()),
    ];
    for (const encoded of encodings) {
      const found = findSecretLeaks(addedDiff("url.txt", [`https://api.example/?q=${encoded}`]), SECRETS);
      expect(
        found.leaks.map((l) => l.form),
        encoded,
      ).toEqual(["url-encoded"]);
    }
  });

  it("finds the value as hex, and a value that spans lines", () => {
    const hex = Buffer.from(KEY).toString("hex");
    expect(findSecretLeaks(addedDiff("h.txt", [hex]), SECRETS).leaks[0]?.form).toBe("hex");
    expect(findSecretLeaks(addedDiff("h.txt", [hex.toUpperCase()]), SECRETS).leaks[0]?.form).toBe("hex");
    const pem = "-----BEGIN KEY-----\nMIIBVgIBADANBgkqhkiG9w0BAQEFAASC\n-----END KEY-----";
    const found = findSecretLeaks(addedDiff("k.pem", ["x", ...pem.split("\n")]), [
      { name: "PEM", value: pem },
    ]);
    expect(found.leaks).toEqual([{ path: "k.pem", line: 2, secret: "PEM", form: "plain" }]);
  });

  it("finds the value in an added path", () => {
    const found = findSecretLeaks(addedDiff(`notes/${KEY.replace(/\//g, "_")}.txt`, ["x"]), [
      { name: "K", value: KEY.replace(/\//g, "_") },
    ]);
    expect(found.leaks).toEqual([expect.objectContaining({ line: null, secret: "K", form: "plain" })]);
  });

  it("reads only added lines: a removed line holding the value is not a leak", () => {
    const diff = [
      "diff --git a/a.ts b/a.ts",
      "--- a/a.ts",
      "+++ b/a.ts",
      "@@ -1,2 +1,1 @@",
      `-${KEY}`,
      " ok",
    ].join("\n");
    expect(findSecretLeaks(diff, SECRETS).leaks).toEqual([]);
  });

  it("does not look for values shorter than 8 characters, and says which", () => {
    const found = findSecretLeaks(addedDiff("a.txt", ["enabled = true", "pin 1234567"]), [
      { name: "FLAG_TOKEN", value: "true" },
      { name: "PIN_SECRET", value: "1234567" },
      ...SECRETS,
    ]);
    expect(found.leaks).toEqual([]);
    expect(found.tooShort).toEqual(["FLAG_TOKEN", "PIN_SECRET"]);
  });

  it("names one value held under several names once, with all its names", () => {
    const found = findSecretLeaks(addedDiff("a.txt", [KEY]), [
      { name: "GITHUB_TOKEN", value: KEY },
      { name: "INPUT_GITHUB-TOKEN", value: KEY },
    ]);
    expect(found.leaks.map((l) => l.secret)).toEqual(["GITHUB_TOKEN / INPUT_GITHUB-TOKEN"]);
  });

  it("finds nothing in text that only resembles the value", () => {
    const near = KEY.slice(0, -1);
    const diff = addedDiff("a.txt", [near, b64(near), encodeURIComponent(near), "sk-ant-api03-…"]);
    expect(findSecretLeaks(diff, SECRETS).leaks).toEqual([]);
  });

  it("keeps a hostile path from breaking out of its code span", () => {
    const text = describeSecretLeak({ path: "a`<b>`.txt", line: 1, secret: "K", form: "hex" });
    expect(text).toBe("`a?<b>?.txt` line 1: the value of K (hex)");
  });
});
