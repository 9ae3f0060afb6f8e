/**
 * GitHub Actions expressions (`${{ … }}`) for the Actions stand-in, evaluated by GitHub's own implementation,
 * `@actions/expressions` (https://github.com/actions/languageservices/tree/main/expressions: the lexer, parser
 * and evaluator behind GitHub's workflow editor support, with GitHub's operators, coercions, case-insensitive
 * property names and functions). What the runner adds is here: the job-status functions success(), failure(),
 * always() and cancelled() (https://docs.github.com/en/actions/reference/workflows-and-actions/expressions#status-check-functions),
 * `hashFiles()` (no cache here: empty), `${{ }}` interpolation in strings and `if:`'s implicit success().
 */
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";

export type ExprValue = string | number | boolean | null | ExprValue[] | { [key: string]: ExprValue };

export interface ExprContext {
  /** Contexts by name: github, inputs, secrets, env, steps, job, runner, vars, matrix, needs. */
  contexts: Record<string, ExprValue>;
  /** Job status for success()/failure()/cancelled(). */
  status?: "success" | "failure" | "cancelled";
}

export class ExpressionError extends Error {}

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

/** GitHub's contexts (https://docs.github.com/en/actions/reference/workflows-and-actions/contexts): an expression
 * may name any of them, whether or not this run gives it a value. */
const CONTEXT_NAMES = [
  "github",
  "env",
  "vars",
  "job",
  "jobs",
  "steps",
  "runner",
  "secrets",
  "strategy",
  "matrix",
  "needs",
  "inputs",
];

/** The runner's functions, beside the language's own (contains, format, toJSON, …). */
function runnerFunctions(status: ExprContext["status"]) {
  const current = status ?? "success";
  const constant = (name: string, value: () => data.ExpressionData) => ({
    name,
    minArgs: 0,
    maxArgs: 0,
    call: value,
  });
  return [
    constant("success", () => new data.BooleanData(current === "success")),
    constant("failure", () => new data.BooleanData(current === "failure")),
    constant("cancelled", () => new data.BooleanData(current === "cancelled")),
    constant("always", () => new data.BooleanData(true)),
    { name: "hashFiles", minArgs: 1, maxArgs: 255, call: () => new data.StringData("") },
  ];
}

/** Evaluates one expression (the text inside `${{ }}`). */
export function evaluate(expression: string, context: ExprContext): ExprValue | undefined {
  const functions = runnerFunctions(context.status);
  let result: data.ExpressionData;
  try {
    const { tokens } = new Lexer(expression).lex();
    const tree = new Parser(
      tokens,
      [...new Set([...CONTEXT_NAMES, ...Object.keys(context.contexts)])],
      functions,
    ).parse();
    const contexts = JSON.parse(JSON.stringify(context.contexts), data.reviver) as data.Dictionary;
    const byName = new Map(functions.map((f) => [f.name.toLowerCase(), f]));
    result = new Evaluator(tree, contexts, byName).evaluate();
  } catch (error) {
    // The lexer's and parser's ExpressionError, the evaluator's ExpressionEvaluationError, and plain Errors
    // (an expression over the length limit) alike: the run fails with GitHub's words and the expression.
    throw new ExpressionError(`${(error as Error).message} in: ${expression}`);
  }
  return JSON.parse(JSON.stringify(result, data.replacer)) as ExprValue;
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
