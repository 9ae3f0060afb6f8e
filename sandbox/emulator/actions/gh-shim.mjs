#!/usr/bin/env node
// The GitHub CLI as the sandbox's runner provides it: GitHub-hosted runners have `gh` preinstalled, and
// workflows call `gh api …`. This stand-in implements `gh api` against GITHUB_API_URL (the sandbox) with
// GH_TOKEN / GITHUB_TOKEN: `gh api [-X METHOD] [-H 'k: v'] [-f k=v] [-F k=v] [--jq EXPR] [--paginate] PATH`.
// `--jq` supports paths: `.`, `.a.b`, `.[0]`, `.[]`, `.a[].b`. Strings print raw, as gh does.

const args = process.argv.slice(2);
const fail = (message, code = 1) => {
  process.stderr.write(`${message}\n`);
  process.exit(code);
};

if (args[0] !== "api") {
  fail(`gh (sandbox stand-in): only \`gh api\` is available, not \`gh ${args.join(" ")}\``, 4);
}

let method = null;
let jq = null;
let path = null;
const headers = { accept: "application/vnd.github+json" };
const fields = {};
for (let i = 1; i < args.length; i++) {
  const arg = args[i];
  if (arg === "-X" || arg === "--method") method = args[++i];
  else if (arg === "-q" || arg === "--jq") jq = args[++i];
  else if (arg === "-H" || arg === "--header") {
    const [k, ...v] = String(args[++i]).split(":");
    headers[k.trim().toLowerCase()] = v.join(":").trim();
  } else if (arg === "-f" || arg === "--raw-field" || arg === "-F" || arg === "--field") {
    const typed = arg === "-F" || arg === "--field";
    const [k, ...v] = String(args[++i]).split("=");
    const raw = v.join("=");
    fields[k] = typed && /^(true|false|null|-?\d+(\.\d+)?)$/.test(raw) ? JSON.parse(raw) : raw;
  } else if (arg === "--paginate" || arg === "--silent" || arg === "-i" || arg === "--include") {
    // accepted; the sandbox answers small lists in one page
  } else if (!arg.startsWith("-") && path === null) path = arg;
  else fail(`gh api (sandbox stand-in): unsupported argument ${arg}`, 2);
}
if (!path) fail("gh api: an endpoint is required", 2);

const token = process.env.GH_TOKEN || process.env.GITHUB_TOKEN;
if (!token)
  fail("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment variable.", 4);
const api = (process.env.GITHUB_API_URL || "https://api.github.com").replace(/\/+$/, "");
const [owner = "", repo = ""] = (process.env.GH_REPO || process.env.GITHUB_REPOSITORY || "/").split("/");
const resolved = path.replace("{owner}", owner).replace("{repo}", repo).replace(/^\/?/, "/");
const hasFields = Object.keys(fields).length > 0;
const verb = method ?? (hasFields ? "POST" : "GET");
let url = `${api}${resolved}`;
let body;
if (hasFields && verb === "GET") {
  const query = new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)]));
  url += (url.includes("?") ? "&" : "?") + query;
} else if (hasFields) {
  body = JSON.stringify(fields);
  headers["content-type"] = "application/json";
}

const response = await fetch(url, {
  method: verb,
  headers: { ...headers, authorization: `token ${token}` },
  body,
});
const text = await response.text();
let data = null;
try {
  data = text ? JSON.parse(text) : null;
} catch {
  data = text;
}
if (!response.ok) {
  const message = data && typeof data === "object" && data.message ? data.message : text;
  fail(`gh: ${message} (HTTP ${response.status})`);
}

function select(value, expr) {
  let current = [value];
  const tokens = expr.trim().match(/\.[A-Za-z_][\w-]*|\[\d*\]|\./g) ?? [];
  for (const token of tokens) {
    if (token === ".") continue;
    if (token === "[]")
      current = current.flatMap((v) =>
        Array.isArray(v) ? v : v && typeof v === "object" ? Object.values(v) : [],
      );
    else if (token.startsWith("["))
      current = current.map((v) => (Array.isArray(v) ? v[Number(token.slice(1, -1))] : null));
    else current = current.map((v) => (v && typeof v === "object" ? (v[token.slice(1)] ?? null) : null));
  }
  return current;
}

const print = (v) => process.stdout.write(`${typeof v === "string" ? v : JSON.stringify(v)}\n`);
if (jq) for (const v of select(data, jq)) print(v);
else process.stdout.write(`${typeof data === "string" ? data : JSON.stringify(data, null, 2)}\n`);
