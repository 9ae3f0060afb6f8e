/**
 * GitHub Actions expressions (`${{ … }}`) for the Actions stand-in, evaluated by GitHub's own implementation,
 * `@actions/expressions` (https://github.com/actions/languageservices/tree/main/expressions: the lexer, parser
 * and evaluator behind GitHub's workflow editor support, with GitHub's operators, coercions, case-insensitive
 * property names and functions). What the runner adds is here: the job-status functions success(), failure(),
 * always() and cancelled() (https://docs.github.com/en/actions/reference/workflows-and-actions/expressions#status-check-functions),
 * `hashFiles()` (no cache here: empty), and the evaluation of the workflow parser's tokens.
 */
import { data, Evaluator, Lexer, Parser } from "@actions/expressions";
import {
  isBasicExpression,
  isBoolean,
  isMapping,
  isNumber,
  isSequence,
  isString,
} from "@actions/workflow-parser";
import type { TemplateToken } from "./workflow-template.js";

export type ExprValue = string | number | boolean | null | ExprValue[] | { [key: string]: ExprValue };

export interface ExprContext {
  /** Contexts by name: github, inputs, secrets, env, steps, job, runner, vars, matrix, needs. */
  contexts: Record<string, ExprValue>;
  /** Job status for success()/failure()/cancelled(). */
  status?: "success" | "failure" | "cancelled";
}

class ExpressionError extends Error {}

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

/**
 * Evaluates one of the parser's tokens as the runner evaluates a workflow value: literals as they are, an
 * expression token (a whole `${{ }}`, or a string with some, which the parser has turned into one
 * `format(…)` expression) through {@link evaluate}, mappings and sequences value by value.
 */
export function evaluateToken(token: TemplateToken | undefined, context: ExprContext): ExprValue | undefined {
  if (token === undefined) return undefined;
  if (isBasicExpression(token)) return evaluate(token.expression, context);
  if (isString(token) || isNumber(token) || isBoolean(token)) return token.value;
  if (isSequence(token)) return [...token].map((item) => evaluateToken(item, context) ?? null);
  if (isMapping(token)) {
    const result: Record<string, ExprValue> = {};
    for (const { key, value } of token)
      result[exprToString(evaluateToken(key, context))] = evaluateToken(value, context) ?? null;
    return result;
  }
  if (token.isExpression) throw new ExpressionError(`unsupported expression: ${token.toString()}`);
  return null;
}

/** A token's value as a string (`env:`, `with:`, `run:`, names). */
export function tokenString(token: TemplateToken | undefined, context: ExprContext): string {
  return exprToString(evaluateToken(token, context));
}

/**
 * Whether a condition holds. Workflow `if:`s come from the parser with GitHub's implicit `success() && (…)`
 * already added; an action's `post-if` is evaluated as written (it defaults to `always()`).
 * https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#jobsjob_idstepsif
 */
export function conditionHolds(expression: string, context: ExprContext): boolean {
  return truthy(evaluate(expression, context));
}
