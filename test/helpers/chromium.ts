/**
 * Headless Chromium for the web view's tests: Debian's `chromium` driven by playwright-core (which downloads
 * no browser of its own). A missing browser fails the test with how to install it, rather than skipping.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: install Debian's package (apt-get install -y chromium) or set CHROMIUM_PATH.`,
    );
  }
  // Running as root (CI containers) needs --no-sandbox; the pages come from 127.0.0.1 only.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ["--no-sandbox"] });
}
