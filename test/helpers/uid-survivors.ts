/**
 * The processes of `uid` once the SIGKILLed ones have left: a killed process runs no more of its own code, but on
 * a busy machine the kernel may take a while to end it and take it out of /proc.
 */
import { setTimeout as delay } from "node:timers/promises";
import { processesOf } from "../../src/worker/isolation/agent-user.js";

export async function survivors(uid: number): Promise<number[]> {
  for (let i = 0; i < 100; i++) {
    const left = await processesOf(uid);
    if (left.length === 0) return left;
    await delay(100);
  }
  return processesOf(uid);
}
