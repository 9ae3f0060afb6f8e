/**
 * One `git cat-file --batch-command` kept for the job over the worker's private repository (objects only, never
 * the agent's directory; private-git.ts starts it like every other git of the worker): the hand-back's check
 * reads trees, sizes and link targets through it, a pipe round trip each, where a git process each cost
 * several milliseconds of every iteration (bench/worker-overhead.ts). Names sent are object ids only, so
 * nothing the agent wrote becomes a command on the pipe.
 *
 * The process holds the event loop only while a request waits, and ends with `close()` or with the worker
 * (its stdin closes).
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import type { Socket } from "node:net";

interface BatchObject {
  type: string;
  size: number;
  /** The content, for `contents` requests. */
  data?: Buffer;
}

interface Waiting {
  withData: boolean;
  resolve: (object: BatchObject | null) => void;
  reject: (error: Error) => void;
}

const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class ObjectBatch {
  private child: ChildProcessWithoutNullStreams | null = null;
  private readonly waiting: Waiting[] = [];
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly start: () => ChildProcessWithoutNullStreams) {}

  /** An object's type and size; null when the repository does not have it. */
  info(id: string): Promise<BatchObject | null> {
    return this.ask("info", id, false);
  }

  /** An object's type, size and content; null when the repository does not have it. */
  contents(id: string): Promise<BatchObject | null> {
    return this.ask("contents", id, true);
  }

  close(): void {
    const child = this.child;
    this.child = null;
    if (!child) return;
    child.stdin.end();
    child.kill();
    this.fail(new Error("the object reader was closed"));
  }

  private ask(command: string, id: string, withData: boolean): Promise<BatchObject | null> {
    if (!OBJECT_ID.test(id)) return Promise.reject(new Error(`not an object id: ${JSON.stringify(id)}`));
    const child = this.running();
    return new Promise((resolve, reject) => {
      this.waiting.push({ withData, resolve, reject });
      pipe(child.stdout).ref();
      child.stdin.write(`${command} ${id}\n`);
    });
  }

  private running(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    const child = this.start();
    this.child = child;
    this.buffered = Buffer.alloc(0);
    child.stdout.on("data", (chunk: Buffer) => this.read(chunk));
    child.stdin.on("error", (error) => this.ended(child, error));
    child.on("error", (error) => this.ended(child, error));
    child.on("close", (code) => this.ended(child, new Error(`git cat-file ended (exit ${code})`)));
    child.stderr.resume();
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) pipe(stream).unref();
    return child;
  }

  private ended(child: ChildProcessWithoutNullStreams, error: Error): void {
    if (this.child !== child) return;
    this.child = null;
    this.fail(error);
  }

  private fail(error: Error): void {
    for (const waiting of this.waiting.splice(0)) waiting.reject(error);
  }

  /** Answers in the order asked: `<id> missing`, or `<id> <type> <size>` and, for contents, the bytes and LF. */
  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const next = this.waiting[0];
      if (!next) break;
      const newline = this.buffered.indexOf(0x0a);
      if (newline < 0) break;
      const header = this.buffered.subarray(0, newline).toString("latin1").split(" ");
      if (header[1] === "missing" || header.length !== 3) {
        this.buffered = this.buffered.subarray(newline + 1);
        this.waiting.shift();
        next.resolve(null);
        continue;
      }
      const size = Number(header[2]);
      const object: BatchObject = { type: header[1]!, size };
      if (next.withData) {
        const end = newline + 1 + size;
        if (this.buffered.length < end + 1) break;
        object.data = Buffer.from(this.buffered.subarray(newline + 1, end));
        this.buffered = this.buffered.subarray(end + 1);
      } else {
        this.buffered = this.buffered.subarray(newline + 1);
      }
      this.waiting.shift();
      next.resolve(object);
    }
    if (this.waiting.length === 0 && this.child) pipe(this.child.stdout).unref();
  }
}

/** A child's stdio stream is a socket (a pipe): it can stop holding the event loop. */
function pipe(stream: NodeJS.ReadableStream | NodeJS.WritableStream): Pick<Socket, "ref" | "unref"> {
  return stream as unknown as Socket;
}
