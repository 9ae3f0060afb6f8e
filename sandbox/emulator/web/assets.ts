/**
 * The static files the pages use, all served from this machine: the stylesheet, the page script and the
 * mermaid package's browser bundle (from node_modules). Nothing is fetched from a CDN.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { ASSET_PREFIX } from "./layout.js";

interface Asset {
  file: string;
  type: string;
}

const require = createRequire(import.meta.url);

const ASSETS: Record<string, () => Asset> = {
  "view.css": () => ({
    file: fileURLToPath(new URL("./static/view.css", import.meta.url)),
    type: "text/css; charset=utf-8",
  }),
  "view.js": () => ({
    file: fileURLToPath(new URL("./static/view.js", import.meta.url)),
    type: "text/javascript; charset=utf-8",
  }),
  // mermaid 11's self-contained browser build (defines `window.mermaid`).
  "mermaid.min.js": () => ({
    file: require.resolve("mermaid/dist/mermaid.min.js"),
    type: "text/javascript; charset=utf-8",
  }),
};

const cache = new Map<string, { body: Buffer; type: string }>();

/** The asset for a request path under {@link ASSET_PREFIX}, or null when there is none by that name. */
export function readAsset(pathname: string): { body: Buffer; type: string } | null {
  if (!pathname.startsWith(ASSET_PREFIX)) return null;
  const name = pathname.slice(ASSET_PREFIX.length);
  const cached = cache.get(name);
  if (cached) return cached;
  const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name]!() : null;
  if (!asset) return null;
  const entry = { body: readFileSync(asset.file), type: asset.type };
  cache.set(name, entry);
  return entry;
}
