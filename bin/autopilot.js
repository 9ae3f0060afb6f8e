#!/usr/bin/env node
// The CLI runs from TypeScript sources through tsx so a fresh clone needs no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
