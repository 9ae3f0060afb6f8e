/**
 * A lightweight host for the git remote and the Actions stand-in in unit tests: the real store and a plain
 * HTTP server on 127.0.0.1 with the handler registry of the sandbox, without loading GitHub's API description.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { attachGit, type SandboxGit } from "../../sandbox/emulator/git/sandbox-git.js";
import { SandboxStore, type StoreOptions } from "../../sandbox/emulator/store.js";

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void | Promise<void>;

export interface GitTestHost {
  url: string;
  store: SandboxStore;
  git: SandboxGit;
  stop(): Promise<void>;
}

export async function startGitHost(storeOptions: StoreOptions = {}): Promise<GitTestHost> {
  const store = new SandboxStore(storeOptions);
  const handlers: [string, Handler][] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const match = handlers.find(([prefix]) => url.pathname.startsWith(prefix));
    if (!match) {
      res.writeHead(404);
      res.end();
      return;
    }
    void Promise.resolve(match[1](req, res, url)).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const git = await attachGit({
    url,
    store,
    registerHandler: (prefix, handler) => {
      handlers.push([prefix, handler]);
    },
  });
  return {
    url,
    store,
    git,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await git.stop();
    },
  };
}
