/**
 * GitHub-flavoured Markdown to safe HTML, the way GitHub renders issue and comment bodies: tables, task lists,
 * strikethrough, autolinks, footnotes and the HTML GitHub lets through (`<details>`, `<summary>`, `<kbd>`...).
 *
 * Issue text is untrusted. Raw HTML is parsed into the tree (so `<details>` works) and then the whole tree is
 * sanitized with rehype-sanitize's default schema, which follows GitHub's own allow-list: no `<script>`,
 * `<style>`, `<iframe>`, event-handler attributes, `style` attributes or `javascript:` URLs survive.
 * https://docs.github.com/en/get-started/writing-on-github/getting-started-with-writing-and-formatting-on-github/basic-writing-and-formatting-syntax
 *
 * Mermaid blocks stay `<pre><code class="language-mermaid">` here; the page's local script draws them.
 * https://docs.github.com/en/get-started/writing-on-github/working-with-advanced-formatting/creating-diagrams
 */
import rehypeRaw from "rehype-raw";
import rehypeSanitize, { defaultSchema } from "rehype-sanitize";
import rehypeStringify from "rehype-stringify";
import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import remarkRehype from "remark-rehype";
import { unified } from "unified";

type Schema = NonNullable<Parameters<typeof rehypeSanitize>[0]>;

/**
 * GitHub's allow-list plus the one attribute it keeps that the default schema drops: `open` on `<details>`
 * (a collapsed section written open). Task-list checkboxes, `<details>` and `<summary>` are in the default.
 * A `<style>` element goes with its text, as `<script>` does, rather than leaving the CSS as prose.
 * https://docs.github.com/en/get-started/writing-on-github/working-with-advanced-formatting/organizing-information-with-collapsed-sections
 */
const GITHUB_SCHEMA: Schema = {
  ...defaultSchema,
  strip: [...(defaultSchema.strip ?? []), "style"],
  attributes: {
    ...defaultSchema.attributes,
    details: [...(defaultSchema.attributes?.details ?? []), "open"],
  },
};

/** The parts of a hast tree the reference linker walks (text nodes and elements). */
interface HastNode {
  type: string;
  tagName?: string;
  value?: string;
  properties?: Record<string, unknown>;
  children?: HastNode[];
}

const REFERENCE = /(^|[^\w&/#])#(\d{1,9})\b/g;

/**
 * `#N` in prose becomes a link to issue N of the repository, as GitHub autolinks issue and pull request
 * references (not inside links, code or pre). Runs after sanitizing: the links it adds are its own.
 * https://docs.github.com/en/get-started/writing-on-github/working-with-advanced-formatting/autolinked-references-and-urls#issues-and-pull-requests
 */
function linkReferences(base: string) {
  const walk = (node: HastNode): void => {
    if (!node.children) return;
    const out: HastNode[] = [];
    for (const child of node.children) {
      if (child.type === "element") {
        if (!["a", "code", "pre"].includes(child.tagName ?? "")) walk(child);
        out.push(child);
        continue;
      }
      if (child.type !== "text" || !child.value?.includes("#")) {
        out.push(child);
        continue;
      }
      const text = child.value;
      let last = 0;
      for (const match of text.matchAll(REFERENCE)) {
        const start = (match.index ?? 0) + (match[1] ?? "").length;
        if (start > last) out.push({ type: "text", value: text.slice(last, start) });
        out.push({
          type: "element",
          tagName: "a",
          properties: { href: `${base}/issues/${match[2]}`, className: ["issue-link"] },
          children: [{ type: "text", value: `#${match[2]}` }],
        });
        last = start + 1 + (match[2] ?? "").length;
      }
      if (last < text.length) out.push({ type: "text", value: text.slice(last) });
    }
    node.children = out;
  };
  return () => (tree: HastNode) => walk(tree);
}

function processorFor(base: string | null) {
  const chain = unified()
    .use(remarkParse)
    .use(remarkGfm)
    .use(remarkRehype, { allowDangerousHtml: true })
    .use(rehypeRaw)
    .use(rehypeSanitize, GITHUB_SCHEMA);
  return (base ? chain.use(linkReferences(base)) : chain).use(rehypeStringify);
}

const processors = new Map<string | null, ReturnType<typeof processorFor>>();

/**
 * Renders a Markdown body to sanitized HTML (an empty body gives GitHub's placeholder text). With `repo`,
 * `#N` references link to that repository's issues.
 */
export function renderMarkdown(markdown: string | null, repo?: { owner: string; name: string }): string {
  if (!markdown?.trim()) return '<p class="muted"><em>No description provided.</em></p>';
  const base = repo ? `/${encodeURIComponent(repo.owner)}/${encodeURIComponent(repo.name)}` : null;
  let processor = processors.get(base);
  if (!processor) {
    processor = processorFor(base);
    processors.set(base, processor);
  }
  return String(processor.processSync(markdown));
}
