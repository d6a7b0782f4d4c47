// aqless dashboard: live updates (which a toggle turns off and on, remembered by the
// browser; "updated" says when the numbers shown were read), confirmations, select-all. No inline script anywhere
// (the Content-Security-Policy forbids it); this file is all the script there is.
"use strict";

(function () {
  const body = document.body;
  const liveMark = document.getElementById("live");
  const banner = document.getElementById("stale");
  const POLL_MS = 10000; // pops and heartbeats publish nothing: look again now and then
  const RETRY_MS = 3000; // while a refresh fails: how soon to look again
  const GONE = "The dashboard does not answer: it is stopped, restarting or out of reach.";
  let busy = false, again = false, streaming = false, failure = null, retrying = null;
  let updated = Date.now(), leaving = false;
  const toggle = document.getElementById("live-toggle");
  const updatedMark = document.getElementById("updated");
  const livePage = document.querySelector("[data-live]") !== null;
  const STORED = "aqless.live";
  let off = false;
  try { off = localStorage.getItem(STORED) === "off"; } catch (error) { /* storage refused */ }
  // leaving the page (a form sent, a link followed) closes its stream: that is no failure,
  // and the page's own address may be gone by then (a cancelled job's)
  addEventListener("beforeunload", () => { leaving = true; setTimeout(() => { leaving = false; }, 5000); });

  // The mark is honest: green while the page follows the server and its last refresh
  // worked; red, with a banner naming the condition and the time of the numbers shown,
  // while refreshes fail; grey while the event stream is away but nothing failed yet.
  function showState() {
    if (liveMark) {
      liveMark.classList.toggle("on", streaming && failure === null && !off);
      liveMark.classList.toggle("down", failure !== null);
      liveMark.classList.toggle("off", off);
      liveMark.textContent = failure !== null ? "not live" : off ? "paused" : "live";
      liveMark.title = failure !== null ? "Not live: " + failure
        : off ? "Live updates are off" : "Live updates";
    }
    if (toggle && livePage) {
      toggle.hidden = false;
      toggle.textContent = off ? "auto-refresh: off" : "auto-refresh: on";
      toggle.setAttribute("aria-pressed", String(!off));
      toggle.title = off ? "Turn live updates on" : "Turn live updates off (kept for this browser)";
    }
    if (updatedMark && livePage) {
      const when = new Date(updated);
      updatedMark.hidden = false;
      updatedMark.textContent = "updated " + when.toLocaleTimeString();
      updatedMark.title = "The numbers shown were read at " + when.toLocaleString();
      updatedMark.dateTime = when.toISOString();
    }
    if (!banner) return;
    banner.hidden = failure === null;
    if (failure !== null) {
      banner.querySelector(".condition").textContent = failure;
      banner.querySelector(".updated").textContent =
        "Last updated " + new Date(updated).toLocaleTimeString() + ".";
    }
  }

  function failed(condition) {
    failure = condition;
    showState();
    if (retrying === null) retrying = setTimeout(() => { retrying = null; refresh(); }, RETRY_MS);
  }

  // The error page's own words (the condition the server is in), else the status.
  function conditionOf(response, fresh) {
    const said = fresh && fresh.querySelector("[data-refusal]");
    const text = said ? said.textContent.trim() : "";
    return text || `The dashboard answered ${response.status} ${response.statusText}`.trim() + ".";
  }

  // A region being used (focus inside, a ticked checkbox) is left alone.
  function inUse(region) {
    return region.contains(document.activeElement) && document.activeElement !== body
      || region.querySelector("input[type=checkbox]:checked") !== null;
  }

  async function refresh() {
    if (leaving || off) return;
    if (busy) { again = true; return; }
    busy = true;
    try {
      let response;
      try {
        response = await fetch(location.href, {headers: {"X-Aqless-Live": "1"}, credentials: "same-origin"});
      } catch (error) {
        failed(GONE);
        return;
      }
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      if (!response.ok) { failed(conditionOf(response, fresh)); return; }
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
      updated = Date.now();
      body.dataset.refreshed = String(updated);
      failure = null;
      showState();
    } catch (error) {
      failed(GONE); // the answer broke off
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
    // (re)connected: look at once, the stream says nothing of what happened meanwhile
    source.onopen = () => { streaming = true; showState(); if (failure !== null) refresh(); };
    // the stream broke: whether the dashboard or its server is away, a refresh tells
    source.onerror = () => { streaming = false; showState(); setTimeout(refresh, 1000); };
    source.addEventListener("change", (message) => {
      let change;
      try { change = JSON.parse(message.data); } catch (error) { return; }
      if (concerns(change)) refresh();
    });
  }
  setInterval(() => { if (!document.hidden) refresh(); }, POLL_MS);
  if (toggle) {
    toggle.addEventListener("click", () => {
      off = !off;
      try { localStorage.setItem(STORED, off ? "off" : "on"); } catch (error) { /* kept for this page */ }
      body.dataset.live = off ? "off" : "on";
      showState();
      if (!off) refresh(); // what changed while it was off, at once
    });
  }
  body.dataset.live = off ? "off" : "on";
  showState();

  // A bulk form's question names what its pressed button does and to how many jobs.
  function bulkQuestion(form, submitter) {
    const count = document.querySelectorAll(`input[type=checkbox][form="${CSS.escape(form.id)}"]:checked`).length;
    const action = submitter ? submitter.textContent.trim() : "Apply to";
    return `${action} ${count} selected job${count === 1 ? "" : "s"}?`;
  }

  document.addEventListener("submit", (event) => {
    const data = event.target.dataset;
    const question = data && (data.confirmBulk !== undefined
      ? bulkQuestion(event.target, event.submitter) : data.confirm);
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
