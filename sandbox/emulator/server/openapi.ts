/**
 * GitHub's published REST description (`@octokit/openapi` generated/api.github.com.json) as a request
 * validator: loaded and prepared once per process, then shared by every sandbox.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import ajvFormats from "ajv-formats";
import { type Document, OpenAPIBackend, type Operation } from "openapi-backend";

export interface MatchedOperation {
  operationId: string;
  /** Upper-case HTTP method. */
  method: string;
  /** OpenAPI path template, e.g. `/repos/{owner}/{repo}/issues/{issue_number}`. */
  template: string;
  /** `GET /repos/{owner}/{repo}/issues/{issue_number}` */
  endpoint: string;
  /** Decoded path parameters. */
  params: Record<string, string>;
  operation: Operation;
}

type MatchResult =
  | { ok: true; match: MatchedOperation }
  | { ok: false; reason: "unknown-endpoint" | "wrong-method"; allowed: string[] };

interface ValidationIssue {
  message: string;
  errors: unknown[];
}

/** Path parameters that GitHub lets span several segments (`git/ref/heads/a/b`, `contents/dir/file`). */
const GREEDY: Array<{ prefix: RegExp }> = [
  { prefix: /^(\/repos\/[^/]+\/[^/]+\/contents\/)(.+)$/ },
  { prefix: /^(\/repos\/[^/]+\/[^/]+\/git\/(?:ref|refs|matching-refs)\/)(.+)$/ },
  { prefix: /^(\/repos\/[^/]+\/[^/]+\/branches\/)(.+)$/ },
  { prefix: /^(\/repos\/[^/]+\/[^/]+\/compare\/)(.+)$/ },
];

function stripTypelessNullable(node: unknown): number {
  let count = 0;
  if (Array.isArray(node)) {
    for (const item of node) count += stripTypelessNullable(item);
  } else if (node && typeof node === "object") {
    const record = node as Record<string, unknown>;
    if ("nullable" in record && !("type" in record)) {
      delete record.nullable;
      count += 1;
    }
    for (const value of Object.values(record)) count += stripTypelessNullable(value);
  }
  return count;
}

export class OpenApiValidator {
  private readonly operationsByPath = new Map<string, Operation[]>();
  private readonly operationsById = new Map<string, Operation>();
  /** Templates by segment count (a parameter never spans a `/` once paths are normalized). */
  private readonly bySegments = new Map<number, string[]>();

  constructor(private readonly api: OpenAPIBackend) {
    for (const op of api.getOperations()) {
      const list = this.operationsByPath.get(op.path) ?? [];
      list.push(op);
      this.operationsByPath.set(op.path, list);
      this.operationsById.set(op.operationId ?? `${op.method} ${op.path}`, op);
    }
    for (const template of this.operationsByPath.keys()) {
      const count = template.split("/").length;
      const list = this.bySegments.get(count) ?? [];
      list.push(template);
      this.bySegments.set(count, list);
    }
  }

  private readonly compiled = new Map<string, { regex: RegExp; names: string[] }>();

  private templateMatches(template: string, path: string): Record<string, string> | null {
    let entry = this.compiled.get(template);
    if (!entry) {
      const names: string[] = [];
      const pattern = template
        .replace(/\{([^}]+)\}/g, (_m, name: string) => {
          names.push(name);
          return "\0";
        })
        .split("\0")
        .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("([^/]+?)");
      entry = { regex: new RegExp(`^${pattern}$`), names };
      this.compiled.set(template, entry);
    }
    const match = entry.regex.exec(path);
    if (!match) return null;
    const params: Record<string, string> = {};
    entry.names.forEach((name, i) => {
      const raw = match[i + 1] ?? "";
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        params[name] = raw;
      }
    });
    return params;
  }

  /** Re-encodes slashes inside GitHub's multi-segment parameters so templates match. */
  static normalizePath(path: string): string {
    const clean = path.length > 1 ? path.replace(/\/+$/, "") : path;
    for (const { prefix } of GREEDY) {
      const m = prefix.exec(clean);
      if (m && m[2]!.includes("/")) {
        // `branches/{branch}/protection` and friends keep their suffix; only bare multi-segment values fold.
        if (/\/branches\/$/.test(m[1]!) && /\/(protection|rename)(\/|$)/.test(m[2]!)) return clean;
        return m[1] + m[2]!.split("/").join("%2F");
      }
    }
    return clean;
  }

  /** Finds the operation for a method and path (the path without query string). */
  match(method: string, rawPath: string): MatchResult {
    const path = OpenApiValidator.normalizePath(rawPath);
    const lower = method.toLowerCase();
    const candidates: Array<{ op: Operation; params: Record<string, string> }> = [];
    for (const template of this.bySegments.get(path.split("/").length) ?? []) {
      const ops = this.operationsByPath.get(template) ?? [];
      if (template.includes("{base}...{head}")) continue; // served by the {basehead} twin
      const params = template === path ? {} : this.templateMatches(template, path);
      if (!params) continue;
      for (const op of ops) candidates.push({ op, params });
    }
    if (candidates.length === 0) return { ok: false, reason: "unknown-endpoint", allowed: [] };
    const literalLength = (t: string) => t.replace(/\{[^}]+\}/g, "").length;
    candidates.sort((a, b) => literalLength(b.op.path) - literalLength(a.op.path));
    const hit = candidates.find((c) => c.op.method === lower);
    if (!hit) {
      return {
        ok: false,
        reason: "wrong-method",
        allowed: [...new Set(candidates.map((c) => c.op.method.toUpperCase()))],
      };
    }
    const upper = method.toUpperCase();
    return {
      ok: true,
      match: {
        operationId: hit.op.operationId ?? `${upper} ${hit.op.path}`,
        method: upper,
        template: hit.op.path,
        endpoint: `${upper} ${hit.op.path}`,
        params: hit.params,
        operation: hit.op,
      },
    };
  }

  /** Validates path params, query and body against the operation; empty when valid. */
  validateRequest(
    match: MatchedOperation,
    request: {
      path: string;
      query: Record<string, string | string[]>;
      headers: Record<string, string>;
      body: unknown;
    },
  ): ValidationIssue[] {
    try {
      const result = this.api.validateRequest(
        {
          method: match.method.toLowerCase(),
          path: OpenApiValidator.normalizePath(request.path),
          query: request.query,
          headers: request.headers,
          body: request.body as never,
        },
        match.operation,
      );
      if (result.valid) return [];
      return (result.errors ?? []).map((e) => ({ message: describeAjvError(e), errors: [e] }));
    } catch (error) {
      return [{ message: `request could not be validated: ${(error as Error).message}`, errors: [] }];
    }
  }

  /** Validates a response body against the operation's schema for `status` (used by tests). */
  validateResponse(match: MatchedOperation, status: number, body: unknown): ValidationIssue[] {
    const responses = match.operation.responses ?? {};
    if (!(String(status) in responses)) return [];
    try {
      const result = this.api.validateResponse(body, match.operation, status);
      if (result.valid) return [];
      // The description marks some nullable fields only with the `nullable` keys stripped at load time
      // (`allOf`/`enum` without `type`): a null there is GitHub's real answer, not a mismatch.
      const real = (result.errors ?? [])
        .filter((e) => valueAt(body, (e as AjvErrorLike).instancePath ?? "") !== null)
        .filter(
          (e) =>
            !KNOWN_DESCRIPTION_BUGS.some((bug) => bug.test((e as { schemaPath?: string }).schemaPath ?? "")),
        );
      return real.map((e) => ({ message: describeAjvError(e), errors: [e] }));
    } catch (error) {
      return [{ message: `response could not be validated: ${(error as Error).message}`, errors: [] }];
    }
  }

  operationById(id: string): Operation | undefined {
    return this.operationsById.get(id);
  }
}

interface AjvErrorLike {
  instancePath?: string;
  message?: string;
  params?: Record<string, unknown>;
  keyword?: string;
}

/**
 * Places where the description contradicts GitHub's real answers: an installation's `account` is described
 * as `allOf` simple-user AND enterprise (a user has no `slug`), so it can never validate.
 */
const KNOWN_DESCRIPTION_BUGS: RegExp[] = [/\/account\/allOf\//];

function valueAt(root: unknown, pointer: string): unknown {
  let node = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** "query: must NOT have additional properties (`foo`)" */
function describeAjvError(error: unknown): string {
  const e = error as AjvErrorLike;
  const where = (e.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".") || "request";
  const params = e.params ?? {};
  const detail =
    "additionalProperty" in params
      ? ` (\`${String(params.additionalProperty)}\`)`
      : "allowedValues" in params
        ? ` (one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")})`
        : "";
  if (params.missingProperty === "requestBody") return "body: a JSON request body is required";
  return `${where.replace(/^requestBody/, "body")}: ${e.message ?? "is invalid"}${detail}`;
}

let cached: Promise<OpenApiValidator> | null = null;

/** Loads and prepares GitHub's REST description once per process. */
export function loadOpenApi(): Promise<OpenApiValidator> {
  cached ??= (async () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve("@octokit/openapi/generated/api.github.com.json");
    const definition = JSON.parse(readFileSync(file, "utf8")) as Document;
    stripTypelessNullable(definition);
    const api = new OpenAPIBackend({
      definition,
      quick: true,
      validate: true,
      ajvOpts: { strict: false },
      customizeAjv: (ajv) => {
        (ajvFormats as unknown as { default: (a: typeof ajv) => void }).default(ajv);
        // GitHub's own format for "name with owner" (`octo-org/octo-repo`), used by `head_repo` of
        // https://docs.github.com/rest/pulls/pulls#create-a-pull-request. Unknown to ajv, it would be ignored
        // with a warning on every sandbox run that opens a pull request.
        ajv.addFormat("repo.nwo", /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/);
        return ajv;
      },
    });
    await api.init();
    return new OpenApiValidator(api);
  })();
  return cached;
}
