// The page's only script: server-sent events re-render the view from the server; nothing else.
"use strict";
(function () {
  var live = document.getElementById("live");
  var view = document.getElementById("view");
  window.__loopShown = [];  // [event id, time shown]: the browser test measures event -> visible
  window.__loopData = {};  // event id -> its comment, for the same measure
  if (!live || !view || !document.body.dataset.live || !window.EventSource) return;
  var pending = null, busy = false;
  var pulse = document.getElementById("pulse");
  function tick() {  // a cycle ended: only the hosts and the daemon, which ask no tmux
    if (!pulse || busy) return;
    fetch(location.pathname + location.search, { headers: { "X-Fragment": "pulse" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { pulse.innerHTML = html; })
      .catch(function () { live.textContent = "refresh failed"; live.className = "bad"; });
  }
  function refresh(id) {
    if (busy) { pending = id; return; }
    busy = true;
    fetch(location.pathname + location.search, { headers: { "X-Fragment": "1" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        view.innerHTML = html;
        pulse = document.getElementById("pulse");
        window.__loopShown.push([id, Date.now()]);
      })
      .catch(function () { live.textContent = "refresh failed"; live.className = "bad"; })
      .finally(function () {
        busy = false;
        if (pending !== null) { var next = pending; pending = null; refresh(next); }
      });
  }
  var source = new EventSource("/events");
  source.onopen = function () { live.textContent = "live"; live.className = "ok"; };
  source.onerror = function () { live.textContent = "reconnecting…"; live.className = "warn"; };
  source.addEventListener("tick", tick);
  source.onmessage = function (message) {
    try { window.__loopData[message.lastEventId] = JSON.parse(message.data).comment_id || ""; } catch (e) { /* a ping */ }
    refresh(message.lastEventId);
  };
})();
