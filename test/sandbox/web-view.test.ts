import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../sandbox/emulator/index.js";
import { renderMarkdown } from "../../sandbox/emulator/web/render-markdown.js";
import {
  CONTENT_SECURITY_POLICY,
  startWebView,
  type WebView,
  WebViewPortError,
} from "../../sandbox/emulator/web/web-view.js";
import { HOSTILE_BODY, REPO, SECRET_TOKEN, webFixture } from "./web-fixture.js";

const started: WebView[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop()));
});

async function view() {
  const fixture = await webFixture();
  const web = await startWebView({ store: fixture.store });
  started.push(web);
  web.setRunDetails(fixture.runDetails);
  return { ...fixture, web };
}

/** A GET with full control of the Host header (fetch does not allow setting it). */
function get(
  web: WebView,
  path: string,
  options: { host?: string; method?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: web.port,
        path,
        method: options.method ?? "GET",
        headers: { host: options.host ?? `127.0.0.1:${web.port}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("renderMarkdown", () => {
  it("renders GitHub-flavoured Markdown: tables, task lists, details, mermaid blocks", () => {
    const html = renderMarkdown(
      "| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] todo\n\n<details open><summary>More</summary>\n\n**inner**\n</details>\n\n```mermaid\ngraph TD\n  A-->B\n```\n",
    );
    expect(html).toContain("<table>");
    expect(html).toContain("<td>1</td>");
    expect(html).toContain('<input type="checkbox" checked disabled>');
    expect(html).toContain("<details open><summary>More</summary>");
    expect(html).toContain("<strong>inner</strong>");
    expect(html).toContain('<code class="language-mermaid">graph TD\n  A-->B\n</code>');
  });

  it("drops every way an issue body could run script or restyle the page", () => {
    const html = renderMarkdown(HOSTILE_BODY);
    expect(html).not.toMatch(/<script|<iframe|<style|<svg|body \{ display/i);
    // No tag keeps an event handler, a style or a javascript: URL (the mermaid source shows them as text).
    expect(html).not.toMatch(/<[a-z][^>]*\s(on[a-z]+|style)=/i);
    expect(html).not.toMatch(/(href|src)="?\s*javascript:/i);
    expect(html).toContain("Please fix this.");
  });

  it("links #N references to the repository's issues, outside code and links", () => {
    const html = renderMarkdown("Closes #12, see [#3](https://example.com) and `#4`; not a#5 or &#6;", {
      owner: "acme",
      name: "widgets",
    });
    expect(html).toContain('Closes <a href="/acme/widgets/issues/12" class="issue-link">#12</a>,');
    expect(html).toContain('<a href="https://example.com">#3</a>');
    expect(html).toContain("<code>#4</code>");
    expect(html).not.toContain("/issues/5");
    expect(html).not.toContain("/issues/6");
  });

  it("hides HTML comments (the dashboard's machine state) as GitHub does", () => {
    expect(renderMarkdown("shown\n<!-- autopilot:state v1 {} -->")).not.toContain("autopilot:state");
  });
});

describe("the web view", () => {
  it("listens on 127.0.0.1 only, serves GitHub's paths and refuses other hosts and writes", async () => {
    const { web, tracking } = await view();
    expect(web.url).toBe(`http://127.0.0.1:${web.port}/`);
    const home = await get(web, "/");
    expect(home.status).toBe(200);
    expect(home.body).toContain(`href="/acme/widgets/issues"`);
    expect(home.headers["content-security-policy"]).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(home.headers["x-content-type-options"]).toBe("nosniff");
    // A page of another site that resolves its name to 127.0.0.1 (DNS rebinding) gets nothing.
    const rebound = await get(web, `/acme/widgets/issues/${tracking}`, { host: `evil.example:${web.port}` });
    expect(rebound.status).toBe(421);
    expect(rebound.body).not.toContain("Autopilot dashboard");
    expect((await get(web, "/acme/widgets/issues", { method: "POST" })).status).toBe(405);
    expect((await get(web, "/acme/nope/issues")).status).toBe(404);
    expect((await get(web, "/acme/widgets/issues/999")).status).toBe(404);
    expect((await get(web, "/acme/widgets/issues/%E0%A4%A")).status).toBe(404);
    const traversal = await get(web, "/-/assets/../../package.json");
    expect(traversal.status).not.toBe(200);
    expect(traversal.body).not.toContain('"name": "autopilot"');
  });

  it("lists issues with their labels in their colours and their state; pull requests redirect", async () => {
    const { web, store, pull } = await view();
    store.closeIssue(REPO, 2, "alice");
    const list = await get(web, "/acme/widgets/issues");
    expect(list.body).toContain("Format prices");
    expect(list.body).toMatch(/background-color:#b60205;color:#ffffff"[^>]*>critical</);
    expect(list.body).toContain('<span class="state state-closed">Closed</span>');
    expect(list.body).toContain("Pinned issues");
    expect(list.body).not.toContain("Format prices (#1)"); // pull requests are not issues
    const open = await get(web, "/acme/widgets/issues?state=open");
    expect(open.body).not.toContain(">Cart total<");
    const redirect = await get(web, `/acme/widgets/issues/${pull}`);
    expect(redirect.status).toBe(302);
    expect(redirect.headers.location).toBe(`/acme/widgets/pull/${pull}`);
  });

  it("shows an issue's comments and who changed which label", async () => {
    const { web } = await view();
    const page = await get(web, "/acme/widgets/issues/1");
    expect(page.body).toContain("Working on it: <strong>iteration 1</strong>");
    expect(page.body).toMatch(
      /autopilot\[bot\]<\/strong> added the <span[^>]*>autopilot:in-progress<\/span> label/,
    );
    expect(page.body).toMatch(
      /autopilot\[bot\]<\/strong> removed the <span[^>]*>autopilot:ready<\/span> label/,
    );
    expect(page.body).toMatch(/alice<\/strong> added the <span[^>]*>autopilot:ready<\/span> label/);
  });

  it("escapes titles and keeps a hostile body inert in the served HTML", async () => {
    const { web, hostile } = await view();
    const page = await get(web, `/acme/widgets/issues/${hostile}`);
    expect(page.body).toContain("Hostile &lt;b&gt;title&lt;/b&gt;");
    const main = page.body.slice(page.body.indexOf('<main id="main">'));
    expect(main).not.toMatch(/<script|<iframe|<style|<svg/i);
    expect(main).not.toMatch(/<[a-z][^>]*\s(on[a-z]+|style)=/i);
    expect(main).not.toMatch(/(href|src)="?\s*javascript:/i);
  });

  it("shows a pull request's checks, statuses, review and diff; unsafe detail links are text", async () => {
    const { web, pull } = await view();
    const page = await get(web, `/acme/widgets/pull/${pull}`);
    expect(page.body).toMatch(/data-check="ci">.*check-success.*<strong>ci<\/strong>/s);
    expect(page.body).toMatch(/data-check="lint">.*check-failure/s);
    expect(page.body).toMatch(/data-check="deploy\/preview">.*check-pending/s);
    expect(page.body).toContain("All <strong>12</strong> tests passed.");
    expect(page.body).not.toContain("javascript:");
    expect(page.body).toContain("alice</strong> approved these changes");
    expect(page.body).toContain("src/format.js");
    expect(page.body).toContain("// &lt;b&gt;not bold&lt;/b&gt;");
  });

  it("shows a run's step summary and log with masked values and debug lines hidden", async () => {
    const { web, runId } = await view();
    const page = await get(web, `/acme/widgets/actions/runs/${runId}`);
    expect(page.body).toContain("<th>complete</th>");
    expect(page.body).toContain("pushing with ***");
    expect(page.body).not.toContain(SECRET_TOKEN);
    expect(page.body).not.toContain("privatekeymaterialline");
    expect(page.body).not.toContain("internal detail");
    expect(page.body).toContain('<span class="log-error">Quality gate failed</span>');
    const actions = await get(web, "/acme/widgets/actions");
    expect(actions.body).toContain(`/acme/widgets/actions/runs/${runId}`);
  });

  it("serves the mermaid bundle and page script itself", async () => {
    const { web } = await view();
    const mermaid = await get(web, "/-/assets/mermaid.min.js");
    expect(mermaid.status).toBe(200);
    expect(mermaid.headers["content-type"]).toContain("text/javascript");
    expect(mermaid.body.length).toBeGreaterThan(100_000);
    const page = await get(web, "/acme/widgets/issues/1");
    expect(page.body).not.toMatch(/<script[^>]+src="(https?:)?\/\//);
    expect(page.body).not.toMatch(/<script>/);
  });

  it("says when the run has ended, so pages stop refreshing", async () => {
    const { web } = await view();
    expect((await get(web, "/")).body).toContain('data-live="true"');
    web.setLive(false);
    expect((await get(web, "/")).body).toContain('data-live="false"');
  });

  it("reports a port in use clearly", async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const { store } = await webFixture();
      await expect(startWebView({ store, port })).rejects.toThrow(WebViewPortError);
      await expect(startWebView({ store, port })).rejects.toThrow(
        `Port ${port} on 127.0.0.1 is already in use`,
      );
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it("starts and stops with the sandbox", async () => {
    const sandbox = await startSandbox();
    const port = sandbox.web.port;
    sandbox.store.createRepo({ owner: "acme", name: "gadgets" });
    const page = await fetch(sandbox.web.url);
    expect(await page.text()).toContain("acme/gadgets");
    await sandbox.stop();
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });
});
