/**
 * Parts of a Markdown text that GitHub's renderer does not show, found by parsing the text as GitHub
 * Flavored Markdown (micromark/mdast) and cut out by the parsed nodes' source positions:
 *
 * - raw HTML that is no content: comments (`<!-- … -->`), processing instructions (`<? … ?>`),
 *   declarations (`<!DOCTYPE …>`) and CDATA sections (`<![CDATA[ … ]]>`), as blocks, inline, or inside an
 *   HTML block;
 * - link reference definitions no link uses (`[x]: https://…` shows nothing, and a used one shows only as
 *   its links), and footnote definitions no footnote reference uses;
 * - link and image titles (`[x](url "title")`, `[x]: url "title"`): a tooltip, not text a reader sees.
 *
 * Everything else, code included, is left byte for byte: the parser only says where the hidden parts are.
 */
import type { Definition, FootnoteDefinition, Html, Image, Link, Nodes, Root } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

/**
 * The parser's time grows faster than linearly on some hostile inputs (thousands of `[a](` or backticks
 * in one paragraph), so long texts are parsed in pieces of about this many characters, cut where the two
 * sides parse alike (see splitForParsing).
 */
export const PARSE_PIECE = 2_048;

/** Removing one hidden part can assemble another (`<<!-- -->?x?>`); a few rounds settle every real text. */
const ROUNDS = 4;

/** Removes what GitHub does not render (see the file comment). */
export function removeUnrenderedMarkdown(text: string): string {
  let out = text;
  for (let round = 0; round < ROUNDS; round++) {
    // Only these characters start a construct removed here: most text needs no parse at all.
    if (!/[<[]/.test(out)) break;
    const next = removeOnce(out);
    if (next === out) break;
    out = next;
  }
  return out;
}

function removeOnce(text: string): string {
  // A piece that starts inside a hidden HTML block the previous piece opened loses the block's tail, up to
  // its terminator, before it is parsed: parsed as text, the tail could open a construct (a fence) that
  // swallows what follows the terminator.
  const pieces = splitForParsing(text).map(({ text: piece, hiddenUntil }) => {
    if (!hiddenUntil) return piece;
    const end = hiddenUntil.exec(piece);
    return end ? piece.slice(end.index + end[0].length) : "";
  });
  const found = pieces.map((piece) => (/[<[]/.test(piece) ? inspect(piece) : null));
  // The parser knows which definitions the links of its own piece use. A link in another piece cannot be
  // resolved there, so a definition also counts as used when its label appears in brackets in another
  // piece (`[label]`, `[text][label]`): when in doubt a definition is kept.
  const bracketed = pieces.length > 1 ? pieces.map(bracketedLabels) : [];
  const usedElsewhere = (index: number, identifier: string) =>
    bracketed.some((labels, other) => other !== index && labels.has(identifier));
  return pieces
    .map((piece, index) => {
      const f = found[index];
      if (!f) return piece;
      const ranges = [...f.ranges];
      for (const node of f.definitions) {
        if (!f.used.has(node.identifier) && !usedElsewhere(index, node.identifier))
          ranges.push(wholeBlock(piece, node));
        else if (node.title) ranges.push(...titleRange(piece, node));
      }
      return cut(piece, ranges);
    })
    .join("");
}

/** The identifier a label normalises to, as the parser makes it (white space collapsed, case folded). */
function identifierOf(label: string): string {
  return label
    .replace(/[\t\n\r ]+/g, " ")
    .trim()
    .toLowerCase()
    .toUpperCase()
    .toLowerCase();
}

/** Identifiers of every `[…]` (at most 999 characters, no unescaped bracket inside) in a text. One pass. */
function bracketedLabels(text: string): Set<string> {
  const labels = new Set<string>();
  let open = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === "[") open = i;
    else if (c === "]" && open >= 0) {
      // `[label]:` is a definition's own label, not a use of it.
      if (i - open <= 1000 && text[i + 1] !== ":") labels.add(identifierOf(text.slice(open + 1, i)));
      open = -1;
    }
  }
  return labels;
}

type Range = [start: number, end: number];

/** Nodes whose children are blocks: an `html` child of one is an HTML block, else it is inline HTML. */
const FLOW_PARENTS = new Set(["root", "blockquote", "listItem", "footnoteDefinition"]);

function parse(text: string, htmlBlocks = true): Root {
  return fromMarkdown(text, {
    extensions: htmlBlocks ? [gfm()] : [gfm(), { disable: { null: ["htmlFlow"] } }],
    mdastExtensions: [gfmFromMarkdown()],
  });
}

interface Inspection {
  /** Hidden parts other than link reference definitions. */
  ranges: Range[];
  definitions: Definition[];
  /** Identifiers of the definitions links and images use. */
  used: Set<string>;
}

function inspect(text: string): Inspection {
  const tree = parse(text);
  const used = new Set<string>();
  const usedNotes = new Set<string>();
  const definitions: Definition[] = [];
  const notes: FootnoteDefinition[] = [];
  const titled: (Link | Image)[] = [];
  const html: { node: Html; flow: boolean }[] = [];
  const visit = (node: Nodes, parent: Nodes | null) => {
    switch (node.type) {
      case "linkReference":
      case "imageReference":
        used.add(node.identifier);
        break;
      case "footnoteReference":
        usedNotes.add(node.identifier);
        break;
      case "definition":
        definitions.push(node);
        break;
      case "footnoteDefinition":
        notes.push(node);
        break;
      case "link":
      case "image":
        if (node.title) titled.push(node);
        break;
      case "html":
        html.push({ node, flow: parent !== null && FLOW_PARENTS.has(parent.type) });
        break;
      default:
        break;
    }
    if ("children" in node) for (const child of node.children) visit(child, node);
  };
  visit(tree, null);

  const ranges: Range[] = [];
  for (const { node, flow } of html) ranges.push(...hiddenHtml(text, node, flow));
  for (const node of notes) if (!usedNotes.has(node.identifier)) ranges.push(wholeBlock(text, node));
  for (const node of titled) ranges.push(...titleRange(text, node));
  return { ranges: ranges.filter((range) => range[1] > range[0]), definitions, used };
}

function span(node: Nodes): Range | null {
  const start = node.position?.start.offset;
  const end = node.position?.end.offset;
  return start === undefined || end === undefined ? null : [start, end];
}

/** A block node with the line break after it, so no blank line is left where it was. */
function wholeBlock(text: string, node: Nodes): Range {
  const range = span(node);
  if (!range) return [0, 0];
  return [range[0], text[range[1]] === "\n" ? range[1] + 1 : range[1]];
}

/** Where the construct a raw-HTML node starts with ends, when it is one that shows nothing. */
function nonContentEnd(value: string): number | null {
  const close = (terminator: string, from: number) => {
    const at = value.indexOf(terminator, from);
    return at < 0 ? value.length : at + terminator.length;
  };
  if (value.startsWith("<!--")) return close("-->", 4);
  if (value.startsWith("<![CDATA[")) return close("]]>", 9);
  if (value.startsWith("<?")) return close("?>", 2);
  if (value.startsWith("<!")) return close(">", 2);
  return null;
}

/**
 * An inline raw-HTML node is one construct; an HTML block may hold several, and text after the construct
 * that opened it (`<!-- x -->visible`) is shown. Blocks are parsed again without HTML blocks, which
 * turns every construct inside into an inline node with its own position.
 */
function hiddenHtml(text: string, node: Html, flow: boolean): Range[] {
  const range = span(node);
  if (!range) return [];
  const [start, end] = range;
  const value = text.slice(start, end);
  const first = nonContentEnd(value) ?? 0;
  // A block that is nothing but hidden goes with its line break.
  if (flow && first === value.length) return [wholeBlock(text, node)];
  const ranges: Range[] = first > 0 ? [[start, start + first]] : [];
  if (!flow) return ranges;
  const rest = value.slice(first);
  if (!rest.includes("<")) return ranges;
  const inner: Html[] = [];
  const collect = (n: Nodes) => {
    if (n.type === "html") inner.push(n);
    if ("children" in n) for (const child of n.children) collect(child);
  };
  collect(parse(rest, false));
  const offset = start + first;
  for (const n of inner) {
    const r = span(n);
    if (!r) continue;
    const length = nonContentEnd(rest.slice(r[0], r[1]));
    if (length !== null) ranges.push([offset + r[0], offset + r[0] + length]);
  }
  return ranges;
}

/**
 * The title of a link, image or definition, with the white space before it: the parser gives its value,
 * not its place, so the place is read backwards from the node's end, where the title always is (before
 * the `)` of a link or image; last on a definition's line).
 */
function titleRange(text: string, node: Link | Image | Definition): Range[] {
  const range = span(node);
  if (!range) return [];
  const [start, end] = range;
  let i = end - 1;
  if (node.type !== "definition") {
    if (text[i] !== ")") return [];
    i--;
  }
  while (i > start && /\s/.test(text[i]!)) i--;
  const closer = text[i];
  const opener = closer === ")" ? "(" : closer;
  if (opener !== '"' && opener !== "'" && opener !== "(") return [];
  const titleEnd = i + 1;
  for (i--; i > start; i--) {
    if (text[i] !== opener) continue;
    let slashes = 0;
    while (text[i - 1 - slashes] === "\\") slashes++;
    if (slashes % 2 === 1) continue;
    let from = i;
    while (from > start && /\s/.test(text[from - 1]!)) from--;
    return from < i ? [[from, titleEnd]] : [];
  }
  return [];
}

function cut(text: string, ranges: Range[]): string {
  if (ranges.length === 0) return text;
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  let out = "";
  let kept = 0;
  for (const [start, end] of sorted) {
    if (end <= kept) continue;
    out += text.slice(kept, Math.max(kept, start));
    kept = end;
  }
  return out + text.slice(kept);
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * HTML blocks that run to their terminator across blank lines (CommonMark's kinds 1 to 5): a cut inside one
 * would leave its tail to be parsed as text in the next piece. Kind 1's content is shown, the others' not.
 */
const LONG_HTML_BLOCKS: { open: RegExp; end: RegExp; hidden: boolean }[] = [
  { open: /^ {0,3}<!--/, end: /-->/, hidden: true },
  { open: /^ {0,3}<\?/, end: /\?>/, hidden: true },
  { open: /^ {0,3}<!\[CDATA\[/, end: /\]\]>/, hidden: true },
  { open: /^ {0,3}<![A-Za-z]/, end: />/, hidden: true },
  {
    open: /^ {0,3}<(?:pre|script|style|textarea)(?:[\s>]|$)/i,
    end: /<\/(?:pre|script|style|textarea)>/i,
    hidden: false,
  },
];

/** A piece of the text to parse; `hiddenUntil` when it starts inside a hidden HTML block (its terminator). */
interface Piece {
  text: string;
  hiddenUntil: RegExp | null;
}

/**
 * Pieces whose joined text is the input. A piece is cut once it holds PARSE_PIECE characters, where the
 * text can be parsed apart without changing what either side means: before a line at the left margin that
 * follows a blank line, outside a fenced block and outside an HTML block that spans blank lines (a blank
 * line and an unindented line end every other block: list items, footnotes, indented code, paragraphs).
 * Failing that by twice that length, after a line end outside those (which can split a paragraph, a
 * footnote or a list item: an unused footnote longer than that can show its tail); failing that (one
 * enormous line or block), anywhere but inside a surrogate pair. A piece cut inside a fenced block parses the rest of the
 * code as text: at worst something there is removed. A piece starting inside a hidden HTML block says so,
 * and the block's tail is removed with it.
 */
function splitForParsing(text: string): Piece[] {
  if (text.length <= PARSE_PIECE) return [{ text, hiddenUntil: null }];
  const pieces: Piece[] = [];
  let start = 0;
  let startHidden: RegExp | null = null;
  let fence: string | null = null;
  let block: (typeof LONG_HTML_BLOCKS)[number] | null = null;
  let afterBlank = false;
  let safeCut = -1;
  let lineCut = -1;
  let pos = 0;
  const cutAt = (at: number, hiddenAt: RegExp | null) => {
    pieces.push({ text: text.slice(start, at), hiddenUntil: startHidden });
    start = at;
    startHidden = hiddenAt;
  };
  while (pos < text.length) {
    const newline = text.indexOf("\n", pos);
    const lineEnd = newline < 0 ? text.length : newline + 1;
    const line = text.slice(pos, lineEnd);
    const head = line.slice(0, 64);
    // Where the line starts is a clean cut when nothing is open and the line ends what came before it.
    if (fence === null && block === null && afterBlank && /^\S/.test(line)) safeCut = pos;
    const marker = FENCE.exec(head)?.[1];
    if (fence !== null) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = null;
    } else if (block !== null) {
      if (block.end.test(line)) block = null;
    } else if (marker) {
      fence = marker;
    } else {
      const opened = LONG_HTML_BLOCKS.find((kind) => kind.open.test(head));
      if (opened && !opened.end.test(line.replace(/^ {0,3}<(?:!\[CDATA\[|!--|[?!])?/, ""))) block = opened;
    }
    const outside = fence === null && block === null;
    if (outside) lineCut = lineEnd;
    afterBlank = outside && line.trim() === "";
    pos = lineEnd;
    if (pos - start < PARSE_PIECE) continue;
    if (safeCut > start) cutAt(safeCut, null);
    else if (pos - start >= PARSE_PIECE * 2 && lineCut > start) cutAt(lineCut, null);
    while (pos - start > PARSE_PIECE * 2) {
      let at = start + PARSE_PIECE;
      if (/[\uD800-\uDBFF]/.test(text[at - 1]!)) at--;
      cutAt(at, block?.hidden ? block.end : null);
    }
  }
  if (start < text.length) pieces.push({ text: text.slice(start), hiddenUntil: startHidden });
  return pieces;
}
