/**
 * git's smart HTTP protocol for the sandbox's bare repositories: `git http-backend` spawned as a CGI program
 * per request at `/git/<owner>/<repo>.git`. Authentication is HTTP Basic with any username and a sandbox
 * token as the password, as GitHub accepts `x-access-token:<token>`; pushes need a token with write access.
 * After every receive-pack the refs are compared with the snapshot taken before it, and each moved ref is
 * reported.
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createGunzip, createInflate } from "node:zlib";
import { ZERO_SHA } from "./git-constants.js";
import { GitRemoteError } from "./git-remote-error.js";
import type { GitPrincipal, PushUpdate } from "./git-remote-types.js";
import { gitEnv, systemGit } from "../proc.js";
import { WORKFLOWS_DENIED_VARIABLE } from "./workflow-push-hook.js";
import { SIGNED_BRANCHES_VARIABLE } from "./signed-commits-hook.js";

/** What the protocol needs of the repositories it serves (the git remote). */
interface SmartHttpRepos {
  /** The directory holding `<owner>/<repo>.git`. */
  readonly root: string;
  /** Backends running now (killed when the remote stops). */
  readonly children: Set<ChildProcess>;
  isStopping(): boolean;
  hasRepo(owner: string, repo: string): boolean;
  /** Runs `fn` holding the repository's lock, which the API's ref writes take too. */
  withRepoLock<T>(owner: string, repo: string, fn: () => Promise<T>): Promise<T>;
  refSnapshot(owner: string, repo: string): Promise<Map<string, string>>;
  authenticate(
    token: string,
    repo: { owner: string; repo: string },
  ): GitPrincipal | null | Promise<GitPrincipal | null>;
  onPush(update: PushUpdate): void | Promise<void>;
  allowAnonymousRead(): boolean;
}

export class GitSmartHttp {
  constructor(private readonly repos: SmartHttpRepos) {}

  /**
   * The HTTP handler for `/git/<owner>/<repo>.git/...` (the path may also omit `.git`). Mount it with
   * `sandbox.registerHandler("/git/", remote.handler)`. Returns false when the path is not a git path.
   */
  readonly handler = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = /^\/git\/([^/]+)\/([^/]+?)(?:\.git)?(\/.*)$/.exec(url.pathname);
    if (!match) return false;
    const [, owner = "", repo = "", rest = ""] = match;
    try {
      await this.serve(req, res, owner, repo, rest, url);
    } catch (error) {
      if (!res.headersSent) {
        const status = error instanceof GitRemoteError ? error.status : 500;
        res.writeHead(status, { "content-type": "text/plain" });
        res.end(`${(error as Error).message}\n`);
      } else {
        res.destroy(error as Error);
      }
    }
    return true;
  };

  private async serve(
    req: IncomingMessage,
    res: ServerResponse,
    owner: string,
    repo: string,
    rest: string,
    url: URL,
  ): Promise<void> {
    if (this.repos.isStopping()) throw new GitRemoteError("sandbox is stopping", 503);
    const service = url.searchParams.get("service");
    const isReceive =
      rest === "/git-receive-pack" || (rest === "/info/refs" && service === "git-receive-pack");
    const isUpload = rest === "/git-upload-pack" || (rest === "/info/refs" && service === "git-upload-pack");
    if (!isReceive && !isUpload) throw new GitRemoteError("only the smart HTTP protocol is served", 403);

    const principal = await this.principalFor(req, owner, repo);
    if (!principal && !(isUpload && this.repos.allowAnonymousRead())) {
      res.writeHead(401, {
        "www-authenticate": 'Basic realm="GitHub"',
        "content-type": "text/plain",
      });
      res.end("Invalid username or token. Password authentication is not supported for Git operations.\n");
      return;
    }
    if (!this.repos.hasRepo(owner, repo)) throw new GitRemoteError("Repository not found.", 404);
    if (isReceive && !principal?.write) {
      throw new GitRemoteError(
        `Permission to ${owner}/${repo}.git denied to ${principal?.login ?? "anonymous"}.`,
        403,
      );
    }

    const pathInfo = `/${owner}/${repo}.git${rest}`;
    if (isReceive && req.method === "POST") {
      // Serialized with the API's ref writes so the before/after comparison sees only this push.
      // The response ends only after the push is recorded, so a client that pushes and then reads the API
      // sees the new head, as on GitHub.
      const { before, after } = await this.repos.withRepoLock(owner, repo, async () => {
        const before = await this.repos.refSnapshot(owner, repo);
        await this.cgi(req, res, pathInfo, url, principal!.login, true, {
          ...(principal!.workflows === false ? { [WORKFLOWS_DENIED_VARIABLE]: "1" } : {}),
          ...(principal!.signedBranches ? { [SIGNED_BRANCHES_VARIABLE]: principal!.signedBranches } : {}),
        });
        return { before, after: await this.repos.refSnapshot(owner, repo) };
      });
      try {
        await this.reportPush(owner, repo, before, after, principal!.login);
      } finally {
        res.end();
      }
    } else {
      await this.cgi(req, res, pathInfo, url, principal?.login ?? "");
    }
  }

  private async principalFor(
    req: IncomingMessage,
    owner: string,
    repo: string,
  ): Promise<GitPrincipal | null> {
    const header = req.headers.authorization;
    if (!header) return null;
    let token: string | undefined;
    const [scheme = "", value = ""] = header.split(/\s+/, 2);
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(value, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      token = colon >= 0 ? decoded.slice(colon + 1) : decoded;
      // GitHub also accepts the token as the username with an empty password.
      if (!token) token = colon >= 0 ? decoded.slice(0, colon) : decoded;
    } else if (/^(bearer|token)$/i.test(scheme)) {
      token = value;
    }
    if (!token) return null;
    return (await this.repos.authenticate(token, { owner, repo })) ?? null;
  }

  private async reportPush(
    owner: string,
    repo: string,
    before: Map<string, string>,
    after: Map<string, string>,
    pusher: string,
  ): Promise<void> {
    const refs = new Set([...before.keys(), ...after.keys()]);
    for (const ref of [...refs].sort()) {
      const from = before.get(ref) ?? ZERO_SHA;
      const to = after.get(ref) ?? ZERO_SHA;
      if (from === to) continue;
      try {
        await this.repos.onPush({ owner, repo, ref, before: from, after: to, pusher });
      } catch (error) {
        process.emitWarning(`sandbox git: push hook failed for ${ref}: ${(error as Error).message}`);
      }
    }
  }

  /** Runs `git http-backend` as a CGI program for one request, streaming both ways. */
  private cgi(
    req: IncomingMessage,
    res: ServerResponse,
    pathInfo: string,
    url: URL,
    user: string,
    keepOpen = false,
    /** What the pre-receive hook enforces for this push (workflow-push-hook.ts, signed-commits-hook.ts). */
    hookEnv: Record<string, string> = {},
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      const env = gitEnv({
        GIT_PROJECT_ROOT: this.repos.root,
        GIT_HTTP_EXPORT_ALL: "1",
        PATH_INFO: pathInfo,
        QUERY_STRING: url.search.replace(/^\?/, ""),
        REQUEST_METHOD: req.method ?? "GET",
        CONTENT_TYPE: req.headers["content-type"] ?? "",
        REMOTE_USER: user,
        REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
        GATEWAY_INTERFACE: "CGI/1.1",
        SERVER_PROTOCOL: "HTTP/1.1",
        ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
        ...hookEnv,
      });
      const child = spawn(systemGit(), ["http-backend"], { env, stdio: ["pipe", "pipe", "pipe"] });
      this.repos.children.add(child);
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.stdin.on("error", () => {});

      // Request body, inflated when the client compressed it (git gzips large fetch negotiations).
      const encoding = String(req.headers["content-encoding"] ?? "").toLowerCase();
      if (encoding === "gzip" || encoding === "x-gzip") req.pipe(createGunzip()).pipe(child.stdin);
      else if (encoding === "deflate") req.pipe(createInflate()).pipe(child.stdin);
      else req.pipe(child.stdin);

      // CGI response: headers, a blank line, then the body.
      let head = Buffer.alloc(0);
      let headersDone = false;
      child.stdout.on("data", (chunk: Buffer) => {
        if (headersDone) {
          res.write(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        let end = head.indexOf("\r\n\r\n");
        let sep = 4;
        if (end < 0) {
          end = head.indexOf("\n\n");
          sep = 2;
        }
        if (end < 0) return;
        headersDone = true;
        let status = 200;
        let reason = "OK";
        const headers: Record<string, string> = {};
        for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
          const colon = line.indexOf(":");
          if (colon < 0) continue;
          const name = line.slice(0, colon).trim();
          const value = line.slice(colon + 1).trim();
          if (name.toLowerCase() === "status") {
            const [code, ...text] = value.split(" ");
            status = Number(code) || 200;
            reason = text.join(" ") || reason;
          } else {
            headers[name] = value;
          }
        }
        res.writeHead(status, reason, headers);
        const body = head.subarray(end + sep);
        if (body.length > 0) res.write(body);
      });
      child.on("error", (error) => {
        this.repos.children.delete(child);
        reject(error);
      });
      child.on("close", (code) => {
        this.repos.children.delete(child);
        if (!headersDone) {
          if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
          res.end(`git http-backend failed (${code}): ${stderr}`);
        } else if (!keepOpen) {
          res.end();
        }
        resolve();
      });
    });
  }
}
