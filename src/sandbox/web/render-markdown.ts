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
export const GITHUB_SCHEMA: Schema = {
  ...defaultSchema,
  strip: [...(defaultSchema.strip ?? []), "style"],
  attributes: {
    ...defaultSchema.attributes,
    details: [...(defaultSchema.attributes?.details ?? []), "open"],
  },
};

const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkRehype, { allowDangerousHtml: true })
  .use(rehypeRaw)
  .use(rehypeSanitize, GITHUB_SCHEMA)
  .use(rehypeStringify);

/** Renders a Markdown body to sanitized HTML (an empty body gives GitHub's placeholder text). */
export function renderMarkdown(markdown: string | null): string {
  if (!markdown?.trim()) return '<p class="muted"><em>No description provided.</em></p>';
  return String(processor.processSync(markdown));
}
