/**
 * A loopback stand-in for the model APIs the real agent CLIs call, so the sandbox and the tests can drive the
 * REAL Claude Code, Codex, Gemini CLI and OpenCode binaries offline with scripted replies. It speaks just enough
 * of Anthropic's streaming Messages API (Claude Code), OpenAI's streaming Responses API (Codex), Google's
 * `generateContent` / `streamGenerateContent` (Gemini CLI) and OpenAI-compatible chat completions (OpenCode).
 *
 * A script is a list of turns. Which turn answers a request is derived from the request itself (how many
 * assistant turns the conversation already holds), so the server keeps no per-conversation state.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

type FakeToolCall =
  /** Claude Code's `Write` tool; for Codex it becomes a shell command that writes the file. */
  | { tool: "write"; path: string; content: string }
  /** Claude Code's `Bash` tool / Codex's `exec_command`. */
  | { tool: "shell"; command: string };

export type FakeTurn =
  | { text: string; calls?: FakeToolCall[] }
  /**
   * Answer with an HTTP error as the provider would: 429 rate limit, 529 overloaded, 401 bad key, 402/403 quota.
   * `body` replaces the stand-in's error body (a provider's documented body, verbatim).
   */
  | { error: 401 | 402 | 403 | 429 | 500 | 529; message?: string; body?: unknown };

export interface FakeModelScript {
  turns: FakeTurn[];
}

export interface FakeModelServer {
  url: string;
  /** Every model request received, for assertions (method, path, model, turn index). */
  requests: { path: string; model: string | null; turn: number }[];
  setScript(script: FakeModelScript): void;
  stop(): Promise<void>;
}

interface AnthropicMessage {
  role: string;
  content: unknown;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function sse(response: ServerResponse, events: { event: string; data: unknown }[]): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  response.end();
}

type Flavour = "anthropic" | "openai" | "google" | "chat";

/** Google's canonical status names for the HTTP codes the stand-in answers with. */
const GOOGLE_STATUS: Record<number, string> = {
  401: "UNAUTHENTICATED",
  402: "FAILED_PRECONDITION",
  403: "PERMISSION_DENIED",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  529: "UNAVAILABLE",
};

function errorReply(
  response: ServerResponse,
  status: number,
  message: string,
  flavour: Flavour,
  custom?: unknown,
): void {
  const anthropicType: Record<number, string> = {
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
  };
  const body =
    custom ??
    (flavour === "anthropic"
      ? { type: "error", error: { type: anthropicType[status] ?? "api_error", message } }
      : flavour === "google"
        ? { error: { code: status, message, status: GOOGLE_STATUS[status] ?? "UNKNOWN" } }
        : {
            error: {
              message,
              type:
                status === 429
                  ? "rate_limit_exceeded"
                  : status === 401
                    ? "invalid_request_error"
                    : "server_error",
              param: null,
              code: status === 401 ? "invalid_api_key" : null,
            },
          });
  response.writeHead(status, { "content-type": "application/json", "retry-after": "0" });
  response.end(JSON.stringify(body));
}

function anthropicReply(
  response: ServerResponse,
  turn: Extract<FakeTurn, { text: string }>,
  model: string,
): void {
  const id = `msg_fake_${randomUUID().slice(0, 8)}`;
  const events: { event: string; data: unknown }[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 100, output_tokens: 1 },
        },
      },
    },
  ];
  const blocks: ({ type: "text"; text: string } | { type: "tool_use"; name: string; input: unknown })[] = [];
  if (turn.text) blocks.push({ type: "text", text: turn.text });
  for (const call of turn.calls ?? []) {
    blocks.push(
      call.tool === "write"
        ? { type: "tool_use", name: "Write", input: { file_path: call.path, content: call.content } }
        : { type: "tool_use", name: "Bash", input: { command: call.command } },
    );
  }
  blocks.forEach((block, index) => {
    if (block.type === "text") {
      events.push(
        {
          event: "content_block_start",
          data: { type: "content_block_start", index, content_block: { type: "text", text: "" } },
        },
        {
          event: "content_block_delta",
          data: { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } },
        },
      );
    } else {
      events.push(
        {
          event: "content_block_start",
          data: {
            type: "content_block_start",
            index,
            content_block: {
              type: "tool_use",
              id: `toolu_fake_${index}_${randomUUID().slice(0, 6)}`,
              name: block.name,
              input: {},
            },
          },
        },
        {
          event: "content_block_delta",
          data: {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) },
          },
        },
      );
    }
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  const usesTools = (turn.calls ?? []).length > 0;
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: usesTools ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 40 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  sse(response, events);
}

function openaiReply(
  response: ServerResponse,
  turn: Extract<FakeTurn, { text: string }>,
  model: string,
): void {
  const responseId = `resp_fake_${randomUUID().slice(0, 8)}`;
  const items: unknown[] = [];
  const calls = turn.calls ?? [];
  if (calls.length > 0) {
    calls.forEach((call, index) => {
      const cmd = call.tool === "shell" ? call.command : writeCommand(call);
      items.push({
        type: "function_call",
        id: `fc_fake_${index}`,
        call_id: `call_fake_${index}_${randomUUID().slice(0, 6)}`,
        name: "exec_command",
        arguments: JSON.stringify({ cmd }),
        status: "completed",
      });
    });
  } else {
    items.push({
      type: "message",
      id: `msg_fake_${randomUUID().slice(0, 8)}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  const events: { event: string; data: unknown }[] = [
    {
      event: "response.created",
      data: {
        type: "response.created",
        response: { id: responseId, model, status: "in_progress", output: [] },
      },
    },
  ];
  items.forEach((item, index) => {
    events.push(
      {
        event: "response.output_item.added",
        data: { type: "response.output_item.added", output_index: index, item },
      },
      {
        event: "response.output_item.done",
        data: { type: "response.output_item.done", output_index: index, item },
      },
    );
  });
  events.push({
    event: "response.completed",
    data: {
      type: "response.completed",
      response: {
        id: responseId,
        model,
        status: "completed",
        output: items,
        usage: {
          input_tokens: 200,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 40,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 240,
        },
      },
    },
  });
  sse(response, events);
}

/** A shell command that writes a file, for the CLIs whose stand-in turns speak shell only. */
function writeCommand(call: Extract<FakeToolCall, { tool: "write" }>): string {
  return `mkdir -p "$(dirname '${call.path}')" && printf '%s' '${call.content.replace(/'/g, "'\\''")}' > '${call.path}'`;
}

const GEMINI_USAGE = { promptTokenCount: 300, candidatesTokenCount: 50, totalTokenCount: 350 };

/**
 * Gemini's `generateContent` answer (one JSON object) or `streamGenerateContent?alt=sse` answer (one SSE `data:`
 * chunk): the Gemini CLI's own tools `write_file` `{file_path, content}` and `run_shell_command` `{command}`.
 */
function geminiReply(
  response: ServerResponse,
  turn: Extract<FakeTurn, { text: string }>,
  stream: boolean,
): void {
  const parts: unknown[] = [];
  if (turn.text) parts.push({ text: turn.text });
  for (const call of turn.calls ?? []) {
    parts.push(
      call.tool === "write"
        ? { functionCall: { name: "write_file", args: { file_path: call.path, content: call.content } } }
        : { functionCall: { name: "run_shell_command", args: { command: call.command } } },
    );
  }
  const chunk = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: GEMINI_USAGE,
    modelVersion: "fake",
  };
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(chunk));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  response.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  response.end();
}

/**
 * OpenAI-compatible chat completions (OpenCode's `@ai-sdk/openai-compatible` provider): a streamed answer is
 * `chat.completion.chunk` deltas then `data: [DONE]`; tool calls are OpenCode's `bash` tool `{command,
 * description}` (a file write becomes a shell command, as for Codex).
 */
function chatReply(
  response: ServerResponse,
  turn: Extract<FakeTurn, { text: string }>,
  model: string,
  stream: boolean,
): void {
  const id = `chatcmpl_fake_${randomUUID().slice(0, 8)}`;
  const toolCalls = (turn.calls ?? []).map((call, index) => ({
    index,
    id: `call_fake_${index}_${randomUUID().slice(0, 6)}`,
    type: "function",
    function: {
      name: "bash",
      arguments: JSON.stringify({
        command: call.tool === "shell" ? call.command : writeCommand(call),
        description: "Run a command",
      }),
    },
  }));
  const usage = { prompt_tokens: 400, completion_tokens: 60, total_tokens: 460 };
  const finish = toolCalls.length ? "tool_calls" : "stop";
  const created = 1_800_000_000;
  if (!stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: turn.text || null,
              ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _, ...call }) => call) } : {}),
            },
            finish_reason: finish,
          },
        ],
        usage,
      }),
    );
    return;
  }
  const chunk = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  });
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.text) chunks.push(chunk({ content: turn.text }, null));
  if (toolCalls.length) chunks.push(chunk({ tool_calls: toolCalls }, null));
  chunks.push(chunk({}, finish), { id, object: "chat.completion.chunk", created, model, choices: [], usage });
  for (const data of chunks) response.write(`data: ${JSON.stringify(data)}\n\n`);
  response.write("data: [DONE]\n\n");
  response.end();
}

/** Gemini sends whole conversations: the turn to play is the number of model turns already in it. */
function geminiTurnIndex(contents: unknown): number {
  if (!Array.isArray(contents)) return 0;
  return contents.filter((content) => (content as { role?: string }).role === "model").length;
}

/** OpenCode sends whole chat conversations: count the assistant messages already in it. */
function chatTurnIndex(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  return messages.filter((message) => (message as { role?: string }).role === "assistant").length;
}

/**
 * OpenCode asks the same model for a conversation title before the real request; the answer is not a turn of
 * the script (and is not recorded as one).
 */
function isTitleRequest(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  const system = messages.find((m) => (m as { role?: string }).role === "system") as
    | { content?: unknown }
    | undefined;
  return typeof system?.content === "string" && system.content.includes("You are a title generator");
}

/** Claude Code sends whole conversations: the turn to play is the number of assistant turns already in it. */
function anthropicTurnIndex(messages: AnthropicMessage[]): number {
  return messages.filter((message) => message.role === "assistant").length;
}

/** Codex sends the conversation as `input` items: count the tool results it carries. */
function openaiTurnIndex(input: unknown): number {
  if (!Array.isArray(input)) return 0;
  return input.filter((item) => (item as { type?: string }).type === "function_call_output").length;
}

export async function startFakeModelServer(
  script: FakeModelScript = { turns: [] },
): Promise<FakeModelServer> {
  let current = script;
  const requests: FakeModelServer["requests"] = [];
  const server = createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? "/").split("?")[0] ?? "/";
      if (request.method === "HEAD" || request.method === "GET") {
        response.writeHead(200).end();
        return;
      }
      const raw = await readBody(request);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        response.writeHead(400).end();
        return;
      }
      const google = /\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(path);
      const flavour: Flavour = google
        ? "google"
        : path.endsWith("/responses")
          ? "openai"
          : path.endsWith("/chat/completions")
            ? "chat"
            : "anthropic";
      const model = google
        ? decodeURIComponent(google[1]!)
        : typeof body.model === "string"
          ? body.model
          : null;
      if (flavour === "chat" && isTitleRequest(body.messages)) {
        chatReply(response, { text: "Fake title" }, model ?? "fake-model", body.stream === true);
        return;
      }
      const turnIndex =
        flavour === "openai"
          ? openaiTurnIndex(body.input)
          : flavour === "google"
            ? geminiTurnIndex(body.contents)
            : flavour === "chat"
              ? chatTurnIndex(body.messages)
              : anthropicTurnIndex((body.messages as AnthropicMessage[]) ?? []);
      requests.push({ path, model, turn: turnIndex });
      const turn = current.turns[Math.min(turnIndex, current.turns.length - 1)] ?? { text: "" };
      if ("error" in turn) {
        errorReply(response, turn.error, turn.message ?? `scripted ${turn.error} (fake)`, flavour, turn.body);
        return;
      }
      if (flavour === "openai") openaiReply(response, turn, model ?? "fake-model");
      else if (flavour === "google") geminiReply(response, turn, google![2] === "streamGenerateContent");
      else if (flavour === "chat") chatReply(response, turn, model ?? "fake-model", body.stream === true);
      else anthropicReply(response, turn, model ?? "claude-fake");
    })().catch(() => {
      if (!response.headersSent) response.writeHead(500);
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setScript(next) {
      current = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
