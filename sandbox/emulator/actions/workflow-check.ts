/**
 * GitHub's own reading of a workflow file: `@actions/workflow-parser`, the parser GitHub publishes from its
 * Actions language services (https://github.com/actions/languageservices/tree/main/workflow-parser), checks
 * the file against GitHub's workflow schema and converts it as GitHub does. A file it rejects is one GitHub
 * would show as "Invalid workflow file" and start no job of
 * (https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax), so the Actions
 * stand-in fails such a run at startup instead of guessing what it meant.
 */
import { convertWorkflowTemplate, NoOperationTraceWriter, parseWorkflow } from "@actions/workflow-parser";

const checked = new Map<string, string[]>();

/** The errors GitHub's parser finds in a workflow file (none: GitHub accepts it). */
export async function workflowErrors(path: string, text: string): Promise<string[]> {
  const key = `${path}\n${text}`;
  const known = checked.get(key);
  if (known) return known;
  const parsed = parseWorkflow({ name: path, content: text }, new NoOperationTraceWriter());
  if (parsed.value) await convertWorkflowTemplate(parsed.context, parsed.value);
  const errors = parsed.context.errors.getErrors().map((error) => error.message);
  if (checked.size > 200) checked.clear();
  checked.set(key, errors);
  return errors;
}
