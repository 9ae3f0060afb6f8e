import { describe, expect, it } from "vitest";
import { commitAuthor } from "../../src/worker/checkout/commit-author.js";

const self = (id: number | null, login: string | null) => ({ getSelf: async () => ({ id, login }) });
const none = { gitUserName: "", gitUserEmail: "" };

describe("the worker's commit author", () => {
  it("is the token's own account when the workflow names none (no GET /users/{bot} needed)", async () => {
    expect(await commitAuthor(none, self(41898282, "my-app[bot]"))).toEqual({
      userName: "my-app[bot]",
      userEmail: "41898282+my-app[bot]@users.noreply.github.com",
    });
  });

  it("is what the workflow names, without asking GitHub", async () => {
    const github = {
      getSelf: async () => {
        throw new Error("not asked");
      },
    };
    expect(await commitAuthor({ gitUserName: "bot", gitUserEmail: "bot@example.com" }, github)).toEqual({
      userName: "bot",
      userEmail: "bot@example.com",
    });
  });

  it("falls back to the defaults when GitHub does not say", async () => {
    const failing = { getSelf: async () => Promise.reject(new Error("502")) };
    expect(await commitAuthor(none, failing)).toEqual({});
    expect(await commitAuthor(none, self(null, null))).toEqual({});
  });
});
