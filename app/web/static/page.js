// The page's only script: server-sent events re-render the view from the server, and the costs
// panel's days are drawn as bars from its table; nothing else.
"use strict";
(function () {
  var live = document.getElementById("live");
  var view = document.getElementById("view");
  window.__loopShown = [];  // [event id, time shown]: the browser test measures event -> visible
  var SVG = "http://www.w3.org/2000/svg", WIDTH = 560, HEIGHT = 120, AXIS = 16, LABEL = 14;  // the peak label above the bars
  function svg(name, attributes, text) {  // attributes only: the policy allows no inline style
    var element = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { element.setAttribute(key, attributes[key]); });
    if (text !== undefined) element.textContent = text;
    return element;
  }
  function chart() {  // a bar a day, its height the day's estimated money (or tokens: none priced)
    var figure = document.querySelector("[data-chart=days]");
    if (!figure) return;
    var by = figure.dataset.by === "tokens" ? "tokens" : "micro";
    var days = Array.prototype.slice.call(document.querySelectorAll("table[data-days] tr[data-day]"));
    var peak = Math.max.apply(null, days.map(function (row) { return Number(row.dataset[by]) || 0; }).concat([1]));
    var step = WIDTH / Math.max(days.length, 1), drawn = svg("svg", {
      viewBox: "0 0 " + WIDTH + " " + (HEIGHT + AXIS), role: "img", "aria-label": figure.getAttribute("aria-label"),
    });
    drawn.appendChild(svg("text", { x: 2, y: 10, class: "peak" }, "peak " + figure.dataset.peak));
    drawn.appendChild(svg("line", { x1: 0, y1: HEIGHT + 0.5, x2: WIDTH, y2: HEIGHT + 0.5, class: "axis" }));
    days.forEach(function (row, n) {
      var height = Math.round((Number(row.dataset[by]) || 0) / peak * (HEIGHT - LABEL));
      var bar = svg("rect", { x: n * step + 2, y: HEIGHT - height, width: step - 4, height: height,
                              class: "bar", "data-day": row.dataset.day });
      bar.appendChild(svg("title", {}, row.dataset.said));
      drawn.appendChild(bar);
      drawn.appendChild(svg("text", { x: n * step + step / 2, y: HEIGHT + AXIS - 3, "text-anchor": "middle" },
                            row.dataset.day.slice(8)));
    });
    figure.replaceChildren(drawn);
  }
  chart();
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
        chart();
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
