/**
 * GitHub Actions expressions (`${{ … }}`), enough of them for the Actions stand-in to read real workflow files:
 * context access (`inputs.issue`, `github.event.inputs.x`, `secrets.NAME`, `steps.id.outputs.k`, `a['b']`),
 * literals, `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||` (with GitHub's value-returning semantics), and the
 * functions contains, startsWith, endsWith, format, join, toJSON, fromJSON, success, failure, always,
 * cancelled. Context and property names are case-insensitive, as on GitHub.
 */

export type ExprValue = string | number | boolean | null | ExprValue[] | { [key: string]: ExprValue };

export interface ExprContext {
  /** Contexts by name: github, inputs, secrets, env, steps, job, runner, vars, matrix, needs. */
  contexts: Record<string, ExprValue>;
  /** Job status for success()/failure()/cancelled(). */
  status?: "success" | "failure" | "cancelled";
}

export class ExpressionError extends Error {}

type Token =
  | { kind: "num"; value: number }
  | { kind: "str"; value: string }
  | { kind: "ident"; value: string }
  | { kind: "op"; value: string }
  | { kind: "eof" };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let value = "";
      i++;
      for (;;) {
        if (i >= source.length) throw new ExpressionError(`unterminated string in: ${source}`);
        if (source[i] === "'") {
          if (source[i + 1] === "'") {
            value += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += source[i++];
      }
      tokens.push({ kind: "str", value });
      continue;
    }
    const two = source.slice(i, i + 2);
    if (["==", "!=", "<=", ">=", "&&", "||"].includes(two)) {
      tokens.push({ kind: "op", value: two });
      i += 2;
      continue;
    }
    if ("!<>()[],.*".includes(c)) {
      tokens.push({ kind: "op", value: c });
      i++;
      continue;
    }
    const num = /^(?:0x[0-9a-f]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(source.slice(i));
    if (num && (c === "-" || /\d/.test(c))) {
      tokens.push({ kind: "num", value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const ident = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(source.slice(i));
    if (ident) {
      tokens.push({ kind: "ident", value: ident[0] });
      i += ident[0].length;
      continue;
    }
    throw new ExpressionError(`unexpected character '${c}' in: ${source}`);
  }
  tokens.push({ kind: "eof" });
  return tokens;
}

function truthy(value: ExprValue | undefined): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === "boolean") return value;
  if (typeof value === "number") return value !== 0 && !Number.isNaN(value);
  if (typeof value === "string") return value.length > 0;
  return true;
}

/** Converts a value to a string as GitHub does when interpolating. */
export function exprToString(value: ExprValue | undefined): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  return JSON.stringify(value, null, 2);
}

function toNumber(value: ExprValue | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "string") return value.trim() === "" ? 0 : Number(value);
  return Number.NaN;
}

function looseEquals(a: ExprValue | undefined, b: ExprValue | undefined): boolean {
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (typeof a === "object" || typeof b === "object") return a === b;
  return toNumber(a) === toNumber(b);
}

function property(target: ExprValue | undefined, name: string): ExprValue | undefined {
  if (target === null || target === undefined || typeof target !== "object") return undefined;
  if (Array.isArray(target)) {
    const index = Number(name);
    return Number.isInteger(index) ? target[index] : undefined;
  }
  if (name in target) return target[name];
  const lower = name.toLowerCase();
  for (const [key, value] of Object.entries(target)) if (key.toLowerCase() === lower) return value;
  return undefined;
}

class Parser {
  private pos = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly context: ExprContext,
    private readonly source: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private next(): Token {
    return this.tokens[this.pos++]!;
  }

  private isOp(value: string): boolean {
    const t = this.peek();
    return t.kind === "op" && t.value === value;
  }

  private expect(value: string): void {
    if (!this.isOp(value)) throw new ExpressionError(`expected '${value}' in: ${this.source}`);
    this.pos++;
  }

  parse(): ExprValue | undefined {
    const value = this.or();
    if (this.peek().kind !== "eof") throw new ExpressionError(`unexpected token in: ${this.source}`);
    return value;
  }

  private or(): ExprValue | undefined {
    let left = this.and();
    while (this.isOp("||")) {
      this.pos++;
      const right = this.and();
      left = truthy(left) ? left : right;
    }
    return left;
  }

  private and(): ExprValue | undefined {
    let left = this.equality();
    while (this.isOp("&&")) {
      this.pos++;
      const right = this.equality();
      left = truthy(left) ? right : left;
    }
    return left;
  }

  private equality(): ExprValue | undefined {
    let left = this.comparison();
    while (this.isOp("==") || this.isOp("!=")) {
      const op = (this.next() as { value: string }).value;
      const right = this.comparison();
      left = op === "==" ? looseEquals(left, right) : !looseEquals(left, right);
    }
    return left;
  }

  private comparison(): ExprValue | undefined {
    let left = this.unary();
    while (this.isOp("<") || this.isOp("<=") || this.isOp(">") || this.isOp(">=")) {
      const op = (this.next() as { value: string }).value;
      const right = this.unary();
      const [a, b] =
        typeof left === "string" && typeof right === "string"
          ? [left.toLowerCase(), right.toLowerCase()]
          : [toNumber(left), toNumber(right)];
      left = op === "<" ? a < b : op === "<=" ? a <= b : op === ">" ? a > b : a >= b;
    }
    return left;
  }

  private unary(): ExprValue | undefined {
    if (this.isOp("!")) {
      this.pos++;
      return !truthy(this.unary());
    }
    return this.postfix(this.primary());
  }

  private postfix(value: ExprValue | undefined): ExprValue | undefined {
    let current = value;
    for (;;) {
      if (this.isOp(".")) {
        this.pos++;
        const name = this.next();
        if (name.kind === "op" && name.value === "*") {
          current = Array.isArray(current)
            ? current
            : current && typeof current === "object"
              ? Object.values(current)
              : [];
          continue;
        }
        if (name.kind !== "ident" && name.kind !== "num")
          throw new ExpressionError(`bad property in: ${this.source}`);
        current = property(current, String(name.value));
      } else if (this.isOp("[")) {
        this.pos++;
        const key = this.or();
        this.expect("]");
        current = property(current, exprToString(key));
      } else {
        return current;
      }
    }
  }

  private primary(): ExprValue | undefined {
    const token = this.next();
    if (token.kind === "num" || token.kind === "str") return token.value;
    if (token.kind === "op" && token.value === "(") {
      const value = this.or();
      this.expect(")");
      return value;
    }
    if (token.kind !== "ident") throw new ExpressionError(`unexpected token in: ${this.source}`);
    const name = token.value;
    const lower = name.toLowerCase();
    if (lower === "true") return true;
    if (lower === "false") return false;
    if (lower === "null") return null;
    if (this.isOp("(")) {
      this.pos++;
      const args: (ExprValue | undefined)[] = [];
      if (!this.isOp(")")) {
        args.push(this.or());
        while (this.isOp(",")) {
          this.pos++;
          args.push(this.or());
        }
      }
      this.expect(")");
      return this.call(lower, args);
    }
    return property(this.context.contexts as ExprValue, name);
  }

  private call(name: string, args: (ExprValue | undefined)[]): ExprValue {
    const status = this.context.status ?? "success";
    switch (name) {
      case "success":
        return status === "success";
      case "failure":
        return status === "failure";
      case "cancelled":
        return status === "cancelled";
      case "always":
        return true;
      case "contains": {
        const [search, item] = args;
        if (Array.isArray(search)) return search.some((v) => looseEquals(v, item));
        return exprToString(search).toLowerCase().includes(exprToString(item).toLowerCase());
      }
      case "startswith":
        return exprToString(args[0]).toLowerCase().startsWith(exprToString(args[1]).toLowerCase());
      case "endswith":
        return exprToString(args[0]).toLowerCase().endsWith(exprToString(args[1]).toLowerCase());
      case "format": {
        const [template, ...rest] = args;
        return exprToString(template)
          .replace(/\{\{/g, "\u0000")
          .replace(/\}\}/g, "\u0001")
          .replace(/\{(\d+)\}/g, (_, i: string) => exprToString(rest[Number(i)]))
          .replace(/\u0000/g, "{")
          .replace(/\u0001/g, "}");
      }
      case "join": {
        const [list, sep] = args;
        const separator = sep === undefined ? "," : exprToString(sep);
        return Array.isArray(list) ? list.map(exprToString).join(separator) : exprToString(list);
      }
      case "tojson":
        return JSON.stringify(args[0] ?? null, null, 2);
      case "fromjson":
        return JSON.parse(exprToString(args[0])) as ExprValue;
      case "hashfiles":
        return "";
      default:
        throw new ExpressionError(`unknown function ${name}() in: ${this.source}`);
    }
  }
}

/** Evaluates one expression (the text inside `${{ }}`). */
export function evaluate(expression: string, context: ExprContext): ExprValue | undefined {
  return new Parser(tokenize(expression), context, expression).parse();
}

const TEMPLATE = /\$\{\{([\s\S]*?)\}\}/g;

/**
 * Expands every `${{ … }}` in a string. A string that is exactly one expression yields its value unchanged
 * (so `if:` conditions keep booleans); otherwise the parts are joined as strings.
 */
export function interpolate(template: string, context: ExprContext): ExprValue | undefined {
  const whole = /^\s*\$\{\{([\s\S]*?)\}\}\s*$/.exec(template);
  if (whole && !whole[1]!.includes("}}")) return evaluate(whole[1]!, context);
  return template.replace(TEMPLATE, (_, expr: string) => exprToString(evaluate(expr, context)));
}

/** Expands a value to a string (`with:`, `env:`, `run:`). */
export function interpolateString(template: unknown, context: ExprContext): string {
  if (template === null || template === undefined) return "";
  if (typeof template !== "string") return String(template);
  return exprToString(interpolate(template, context));
}

/**
 * Evaluates an `if:` condition as the runner does: a bare expression without `${{ }}` is allowed, and a
 * condition that calls none of the status functions implicitly requires success().
 */
export function evaluateCondition(condition: unknown, context: ExprContext): boolean {
  if (condition === undefined || condition === null || condition === "")
    return (context.status ?? "success") === "success";
  if (typeof condition === "boolean") return condition && (context.status ?? "success") === "success";
  let source = String(condition).trim();
  const whole = /^\$\{\{([\s\S]*)\}\}$/.exec(source);
  if (whole) source = whole[1]!;
  const value = truthy(evaluate(source, context));
  if (/\b(always|failure|cancelled|success)\s*\(/i.test(source)) return value;
  return value && (context.status ?? "success") === "success";
}
