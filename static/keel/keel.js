// Keel's small client: a reconnecting websocket and the home page's wiring check.
(function () {
  "use strict";

  function csrfToken() {
    var headers = document.body.getAttribute("hx-headers");
    try { return JSON.parse(headers)["X-CSRFToken"]; } catch (e) { return ""; }
  }

  // Opens ws(s)://host/path and reconnects with backoff; onMessage gets parsed JSON.
  function keelSocket(path, onMessage, onOpen) {
    var proto = location.protocol === "https:" ? "wss://" : "ws://";
    var delay = 250, socket = null;
    function open() {
      socket = new WebSocket(proto + location.host + path);
      socket.onopen = function () { delay = 250; if (onOpen) onOpen(); };
      socket.onmessage = function (e) { onMessage(JSON.parse(e.data)); };
      socket.onclose = function (e) {
        if (e.code === 4403) return;  // refused: not a member; retrying will not help
        setTimeout(open, delay); delay = Math.min(delay * 2, 5000);
      };
    }
    open();
    return { close: function () { socket.onclose = null; socket.close(); } };
  }
  window.keelSocket = keelSocket;
  window.keelCsrfToken = csrfToken;

  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("wiring-check");
    if (!button) return;
    var result = document.getElementById("wiring-result");
    var started = {}, arrived = {};
    function show(id) {
      if (!(id in started) || !(id in arrived)) return;  // the push may beat the POST's answer
      var ms = Math.round(arrived[id].at - started[id]);
      result.className = "ok";
      result.textContent = "Round trip complete in " + ms + " ms: queued, run by worker " + arrived[id].msg.worker + ", written, pushed.";
    }
    keelSocket("/ws/tenant/", function (msg) {
      if (msg.type !== "wiring.done") return;
      arrived[msg.check_id] = { at: performance.now(), msg: msg };
      show(msg.check_id);
    }, function () { button.disabled = false; });
    button.disabled = true;
    button.addEventListener("click", function () {
      result.className = "muted";
      result.textContent = "Waiting for a worker…";
      var t0 = performance.now();
      fetch("/api/v1/wiring-checks/", { method: "POST", headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (check) { started[check.id] = t0; show(check.id); })
        .catch(function (err) { result.className = "notice-error"; result.textContent = "The check could not start: " + err.message; });
    });
  });
})();
