// aqless dashboard: live updates, confirmations, select-all. No inline script anywhere
// (the Content-Security-Policy forbids it); this file is all the script there is.
"use strict";

(function () {
  const body = document.body;
  const liveMark = document.getElementById("live");
  const POLL_MS = 10000; // pops and heartbeats publish nothing: look again now and then
  let busy = false, again = false;

  // A region being used (focus inside, a ticked checkbox) is left alone.
  function inUse(region) {
    return region.contains(document.activeElement) && document.activeElement !== body
      || region.querySelector("input[type=checkbox]:checked") !== null;
  }

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const response = await fetch(location.href, {headers: {"X-Aqless-Live": "1"}, credentials: "same-origin"});
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      const ids = (doc) => [...doc.querySelectorAll("[data-live][id]")].map(r => r.id).join();
      const main = document.querySelector("main"), freshMain = fresh.querySelector("main");
      if (ids(document) !== ids(fresh)) {
        // a section came or went (a job failed...): take the whole page, unless in use
        if (main && freshMain && !inUse(main)) main.replaceWith(document.importNode(freshMain, true));
      } else {
        for (const region of document.querySelectorAll("[data-live][id]")) {
          const next = fresh.getElementById(region.id);
          if (next && !inUse(region) && next.innerHTML !== region.innerHTML) {
            region.replaceWith(document.importNode(next, true));
          }
        }
      }
      body.dataset.refreshed = String(Date.now());
    } catch (error) {
      // the next event or poll tries again
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  function concerns(change) {
    const jid = body.dataset.watchJid, queue = body.dataset.watchQueue;
    if (change.more || (!jid && !queue)) return true;
    if (jid && change.jids.includes(jid)) return true;
    if (queue && change.queues.includes(queue)) return true;
    return change.kinds.includes("reconnected") || change.kinds.some(k => k.startsWith("config"));
  }

  if (body.dataset.events && window.EventSource) {
    const source = new EventSource(body.dataset.events);
    source.onopen = () => liveMark && liveMark.classList.add("on");
    source.onerror = () => liveMark && liveMark.classList.remove("on");
    source.addEventListener("change", (message) => {
      let change;
      try { change = JSON.parse(message.data); } catch (error) { return; }
      if (concerns(change)) refresh();
    });
  }
  setInterval(() => { if (!document.hidden) refresh(); }, POLL_MS);

  document.addEventListener("submit", (event) => {
    const question = event.target.dataset && event.target.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });
  document.addEventListener("change", (event) => {
    const all = event.target.dataset && event.target.dataset.selectAll;
    if (all === undefined) return;
    for (const box of document.querySelectorAll(`input[type=checkbox][form="${CSS.escape(all)}"]`)) {
      box.checked = event.target.checked;
    }
  });
})();
