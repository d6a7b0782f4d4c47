// aqless dashboard, the search page: the names its inputs offer (fetched once, when one is
// first used), and an action on every job found: a confirmation naming the action and the
// count, then the progress while it runs. No inline script (the Content-Security-Policy).
"use strict";

(function () {
  const form = document.getElementById("search-form");
  let named = false;

  async function fillNames() {
    if (named || !form || !form.dataset.names) return;
    named = true;
    let names;
    try {
      const response = await fetch(form.dataset.names, {credentials: "same-origin", headers: {Accept: "application/json"}});
      if (!response.ok) { named = false; return; }
      names = await response.json();
    } catch (error) { named = false; return; }
    for (const kind of ["classes", "tags", "groups", "queues", "workers"]) {
      const list = document.getElementById("search-" + kind);
      if (!list || !Array.isArray(names[kind])) continue;
      list.replaceChildren(...names[kind].map((name) => {
        const option = document.createElement("option");
        option.value = name;
        return option;
      }));
    }
  }
  document.addEventListener("focusin", (event) => {
    const list = event.target.getAttribute && event.target.getAttribute("list");
    if (list && list.startsWith("search-")) fillNames();
  });

  function randomId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  }

  const act = document.getElementById("search-act");
  if (!act) return;
  const bar = document.getElementById("search-act-progress");
  const status = document.getElementById("search-act-status");

  act.addEventListener("submit", async (event) => {
    event.preventDefault();
    const action = act.elements.action.value; // (act.action is that select, not the URL)
    const count = act.elements.count.value;
    const to = act.elements.to.value.trim();
    const where = action === "move" ? ` to ${to || "(no queue given)"}` : "";
    const question = `${action[0].toUpperCase()}${action.slice(1)} ${count} job${count === "1" ? "" : "s"}${where}?`;
    if (!window.confirm(question)) return;
    const id = randomId();
    act.elements.progress.value = id;
    const button = act.querySelector("button[type=submit]");
    button.disabled = true;
    bar.hidden = false;
    bar.value = 0;
    status.textContent = `${action}: 0 of ${count}`;
    let running = true;
    const poll = async () => {
      while (running) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        try {
          const response = await fetch(`${bar.dataset.url}?id=${id}`, {credentials: "same-origin"});
          if (!response.ok) continue;
          const tally = await response.json();
          if (!running || !tally.started) continue;
          bar.max = tally.total || 1;
          bar.value = tally.done;
          status.textContent = `${action}: ${tally.done} of ${tally.total}`;
        } catch (error) { /* the answer to the action says what happened */ }
      }
    };
    poll();
    let message;
    try {
      const response = await fetch(act.getAttribute("action"), {
        method: "POST",
        credentials: "same-origin",
        headers: {Accept: "application/json", "Content-Type": "application/x-www-form-urlencoded"},
        body: new URLSearchParams(new FormData(act)),
      });
      const answer = await response.json().catch(() => ({ok: false, message: `${response.status} ${response.statusText}`}));
      message = answer.message || answer.error || "";
      act.dataset.outcome = answer.ok ? "ok" : "error";
      if (answer.ok) bar.value = bar.max;
    } catch (error) {
      message = "The dashboard does not answer: the action may have been done in part.";
      act.dataset.outcome = "error";
    }
    running = false;
    status.textContent = message;
    status.className = act.dataset.outcome === "ok" ? "flash flash-ok" : "flash flash-error";
    button.disabled = false;
  });
})();
