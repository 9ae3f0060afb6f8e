/**
 * Store records → GitHub's JSON shapes (REST responses and webhook payloads share them, as on GitHub).
 */
import { CiShapes } from "./shapes/ci-shapes.js";

export { type Json, type JsonObject, iso } from "./shapes/json-shape.js";

/**
 * Serializes store records with the sandbox's URLs. Built in layers under `shapes/`, one group of resources
 * each: `account-shapes.ts` (users, repositories, labels, the app) → `issue-shapes.ts` → `pull-shapes.ts` →
 * `ci-shapes.ts` (checks, statuses, Actions).
 */
export class Shapes extends CiShapes {}
