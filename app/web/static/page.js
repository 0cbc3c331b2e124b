// The page's only script: server-sent events re-render the view from the server; nothing else.
"use strict";
(function () {
  var live = document.getElementById("live");
  var view = document.getElementById("view");
  window.__loopShown = [];  // [event id, time shown]: the browser test measures event -> visible
  if (!live || !view || !document.body.dataset.live || !window.EventSource) return;
  var pending = null, busy = false;
  var pulse = document.getElementById("pulse");
  var lastPulse = Date.now();
  function tick(message) {  // a cycle ended: say so here; the hosts and the daemon at most every 10 s
    var data = {};
    try { data = JSON.parse(message.data); } catch (e) { return; }
    Object.keys(data).forEach(function (key) {
      var cell = document.querySelector('[data-fact="last cycle: ' + key + '"]');
      if (cell) cell.textContent = String(data[key]);
    });
    var last = document.querySelector('[data-fact="last cycle"]');
    if (last) last.textContent = "just now";  // as the server says a time of this second
    if (!pulse || busy || Date.now() - lastPulse < 10000) return;
    lastPulse = Date.now();
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
    refresh(message.lastEventId);
  };
})();
