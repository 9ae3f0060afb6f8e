// The web view's only script (served by the sandbox itself, nothing from elsewhere): draws ```mermaid blocks
// with the locally served mermaid bundle, and while the scenario runs keeps the page current by fetching it
// again and swapping the main part when it changed (scroll position and open <details> are kept).
(() => {
  const MERMAID = "/-/assets/mermaid.min.js";
  let mermaidLoading = null;

  function loadMermaid() {
    if (window.mermaid) return Promise.resolve(window.mermaid);
    mermaidLoading ??= new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = MERMAID;
      script.onload = () => {
        // strict: labels are sanitized and click bindings are off, as on GitHub (diagrams are user text).
        window.mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "default" });
        resolve(window.mermaid);
      };
      script.onerror = () => reject(new Error("the mermaid bundle did not load"));
      document.head.appendChild(script);
    });
    return mermaidLoading;
  }

  async function drawDiagrams(root) {
    const blocks = [...root.querySelectorAll("pre > code.language-mermaid")];
    if (blocks.length) {
      const nodes = blocks.map((code) => {
        const box = document.createElement("div");
        box.className = "mermaid";
        box.textContent = code.textContent;
        code.parentElement.replaceWith(box);
        return box;
      });
      try {
        const mermaid = await loadMermaid();
        await mermaid.run({ nodes });
      } catch (error) {
        for (const box of nodes) if (!box.querySelector("svg")) box.classList.add("mermaid-error");
        console.error(error);
      }
    }
    document.body.dataset.diagrams = "drawn";
  }

  const main = document.getElementById("main");
  let served = main ? main.innerHTML : "";

  async function refresh() {
    if (document.body.dataset.live !== "true") return;
    try {
      const response = await fetch(location.href, { cache: "no-store", headers: { accept: "text/html" } });
      if (response.ok) {
        const next = new DOMParser().parseFromString(await response.text(), "text/html");
        const nextMain = next.getElementById("main");
        if (nextMain && nextMain.innerHTML !== served) {
          served = nextMain.innerHTML;
          const open = new Set([...main.querySelectorAll("details")].flatMap((d, i) => (d.open ? [i] : [])));
          main.replaceChildren(...document.adoptNode(nextMain).childNodes);
          main.querySelectorAll("details").forEach((d, i) => {
            if (open.has(i)) d.open = true;
          });
          await drawDiagrams(main);
        }
        const badge = next.querySelector(".live-badge");
        const here = document.querySelector(".live-badge");
        if (badge && here) here.textContent = badge.textContent;
        document.body.dataset.live = next.body.dataset.live ?? "false";
      }
    } catch {
      // the sandbox stopped: the page stays as it was
      document.body.dataset.live = "false";
      return;
    }
    setTimeout(refresh, 2000);
  }

  if (main) void drawDiagrams(main).then(() => setTimeout(refresh, 2000));
})();
