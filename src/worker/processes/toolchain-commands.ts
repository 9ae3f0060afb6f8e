/**
 * One table for the two halves of a toolchain: what installs a project's dependencies (the `setup:` init
 * proposes, setup-commands.ts) and how its checks run (the detected quality commands, quality.ts). Both halves
 * run in the same environment: a uv or Poetry project's tests run with `uv run` / `poetry run`, in the
 * virtual environment the setup synced (plain `python` would not see it), and a Gradle or Maven project with
 * its own wrapper script (`./gradlew`, `./mvnw`: the build tool version the project chose) when it has one.
 * Once, a uv project's setup synced `.venv` and its quality command ran the system's Python beside it.
 */
import type { ProjectFiles } from "./project-files.js";

interface Toolchain {
  /** The install, or null when there is nothing to install. */
  install: string | null;
  /** What runs a command inside the installed environment, prefixed to it ("" for none). */
  run: string;
}

/**
 * Python's environment manager, from the lockfile: uv and Poetry keep their own virtual environment, pip
 * installs for the user into the interpreter `python -m pytest` runs.
 */
export async function pythonToolchain(files: ProjectFiles): Promise<Toolchain> {
  if (await files.has("uv.lock"))
    // --frozen: run from the lockfile as it is; uv neither re-resolves nor rewrites it.
    return { install: "uv sync --frozen", run: "uv run --frozen " };
  if (await files.has("poetry.lock"))
    return { install: "poetry install --no-interaction", run: "poetry run " };
  if (await files.has("requirements.txt"))
    return { install: "python -m pip install --user -r requirements.txt", run: "" };
  return { install: null, run: "" };
}

/** A JVM build's install and check, through the project's wrapper when it has one. */
interface JvmBuild {
  install: string;
  check: string;
}

export async function jvmBuild(files: ProjectFiles): Promise<JvmBuild | null> {
  const gradle = (await files.has("gradlew"))
    ? "./gradlew"
    : (await files.has("build.gradle")) ||
        (await files.has("build.gradle.kts")) ||
        (await files.has("settings.gradle")) ||
        (await files.has("settings.gradle.kts"))
      ? "gradle"
      : null;
  // The install compiles the main and test sources: that resolves the dependencies of both and the plugins
  // the check runs first (Maven's `dependency:go-offline` resolves a plugin set of its own, and still misses
  // some the build uses). --no-daemon: a Gradle daemon would outlive the command, which the sandbox ends.
  if (gradle) return { install: `${gradle} --no-daemon testClasses`, check: `${gradle} --no-daemon check` };
  const maven = (await files.has("mvnw")) ? "./mvnw" : (await files.has("pom.xml")) ? "mvn" : null;
  // -B: batch mode (no prompts, no colours); -ntp: no download progress lines in the output kept.
  if (maven) return { install: `${maven} -B -ntp test-compile`, check: `${maven} -B -ntp verify` };
  return null;
}
