import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebView, type WebView } from "../../sandbox/emulator/web/web-view.js";
import { launchChromium } from "../helpers/chromium.js";
import { type WebFixture, webFixture } from "./web-fixture.js";

let browser: Browser;
let web: WebView;
let fixture: WebFixture;

beforeAll(async () => {
  fixture = await webFixture();
  web = await startWebView({ store: fixture.store });
  web.setRunDetails(fixture.runDetails);
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await web?.stop();
});

/** A page that records dialogs, errors and requests leaving the web view. */
async function open(path: string): Promise<{ page: Page; dialogs: string[]; offsite: string[] }> {
  const page = await browser.newPage();
  const dialogs: string[] = [];
  const offsite: string[] = [];
  page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(web.url) && !url.startsWith("data:")) offsite.push(url);
  });
  await page.goto(new URL(path, web.url).href);
  await page.waitForSelector('body[data-diagrams="drawn"]', { timeout: 30_000 });
  return { page, dialogs, offsite };
}

describe("the web view in Chromium", () => {
  it("shows the tracking issue as the dashboard: tables, checkboxes and the graph drawn by mermaid", async () => {
    const { page, offsite } = await open(`/acme/widgets/issues/${fixture.tracking}`);
    try {
      const body = page.locator(".opening .markdown-body");
      expect(await body.locator("table").count()).toBeGreaterThanOrEqual(2);
      expect(await body.locator("th", { hasText: "task" }).first().isVisible()).toBe(true);
      expect(await body.locator('input[type="checkbox"]').count()).toBeGreaterThan(0);
      // The graph sits in a collapsed <details>: open it as a reader would.
      await body.locator("summary", { hasText: "Dependency graph" }).click();
      const svg = body.locator(".mermaid svg");
      await svg.waitFor({ state: "visible" });
      expect(await svg.getAttribute("aria-roledescription")).toMatch(/flowchart/);
      expect(await svg.locator(".node").count()).toBe(2);
      expect(offsite).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("keeps a hostile issue inert: no script runs, no dialog opens, nothing is fetched from elsewhere", async () => {
    const { page, dialogs, offsite } = await open(`/acme/widgets/issues/${fixture.hostile}`);
    try {
      // Give the mermaid label and any handlers their chance, then poke the elements a reader would.
      await page.locator("#main .mermaid svg").waitFor({ state: "attached" });
      await page.hover("text=hover me");
      await page.click("text=click me");
      await page.click("text=anchor");
      expect(await page.evaluate("typeof window.pwned")).toBe("undefined");
      expect(dialogs).toEqual([]);
      // Only mermaid's own drawing may hold a <style> (inside its SVG); the issue text holds none.
      expect(
        await page.evaluate(
          "[...document.querySelectorAll('#main iframe, #main script, #main style')].filter((e) => !e.closest('svg')).length",
        ),
      ).toBe(0);
      expect(await page.locator("body").isVisible()).toBe(true);
      expect(offsite).toEqual([]);
      expect(await page.title()).toContain("Hostile <b>title</b>");
    } finally {
      await page.close();
    }
  });

  it("blocks inline script by policy even if markup slipped through", async () => {
    const page = await browser.newPage();
    try {
      await page.goto(web.url);
      // What a sanitizer bug would let through: the Content-Security-Policy still refuses to run it.
      const ran = await page.evaluate(`(async () => {
        const script = document.createElement("script");
        script.textContent = "window.injected = true";
        document.body.appendChild(script);
        const img = document.createElement("img");
        img.setAttribute("src", "x");
        img.setAttribute("onerror", "window.injected = true");
        document.body.appendChild(img);
        await new Promise((r) => setTimeout(r, 500));
        return window.injected ?? false;
      })()`);
      expect(ran).toBe(false);
    } finally {
      await page.close();
    }
  });

  it("shows a pull request's checks with their outcomes", async () => {
    const { page } = await open(`/acme/widgets/pull/${fixture.pull}`);
    try {
      const checks = page.locator("#checks");
      await expect.poll(() => checks.locator(".check-row").count()).toBe(3);
      expect(await checks.locator('[data-check="ci"] .check-success').isVisible()).toBe(true);
      expect(await checks.locator('[data-check="lint"] .check-failure').isVisible()).toBe(true);
      expect(await checks.locator('[data-check="deploy/preview"] .check-pending').isVisible()).toBe(true);
      expect(await page.locator("#files .diff-add").first().textContent()).toContain("formatPrice");
    } finally {
      await page.close();
    }
  });

  it("updates a page while the run goes on, and stops when it has ended", async () => {
    const { page } = await open("/acme/widgets/issues/1");
    try {
      fixture.store.createComment("acme/widgets", 1, "A **new** comment arrived", "alice");
      await page.locator("text=A new comment arrived").waitFor({ timeout: 20_000 });
      web.setLive(false);
      await page.locator(".live-badge", { hasText: "ended" }).waitFor({ timeout: 20_000 });
      expect(await page.locator("body").getAttribute("data-live")).toBe("false");
    } finally {
      web.setLive(true);
      await page.close();
    }
  });
});
