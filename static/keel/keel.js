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

  // The words a script shows, in the page's language: base.html renders them (console/status.py
  // ui_words) into <body data-words>; "%(name)s" takes values[name]. A missing key shows the key.
  var WORDS = null;
  function keelWord(key, values) {
    if (WORDS === null) {
      try { WORDS = JSON.parse(document.body.getAttribute("data-words") || "{}"); } catch (e) { WORDS = {}; }
    }
    var text = WORDS[key] || key;
    return text.replace(/%\((\w+)\)[sd]/g, function (all, k) { return values && k in values ? values[k] : all; });
  }
  window.keelWord = keelWord;

  // Sizes computed by the server (bar widths, offsets) arrive as data-css-<property>
  // attributes and are applied here through the CSSOM: a style="" attribute would
  // need 'unsafe-inline' in the Content-Security-Policy. Content added later (htmx
  // swaps, innerHTML from a fetch) is styled as it arrives.
  var CSS_ATTR = /^data-css-(.+)$/;
  function applyCss(root) {
    if (!root || root.nodeType !== 1) return;
    var nodes = [root].concat(Array.prototype.slice.call(root.querySelectorAll("*")));
    nodes.forEach(function (el) {
      for (var i = 0; i < el.attributes.length; i++) {
        var m = CSS_ATTR.exec(el.attributes[i].name);
        if (m) el.style.setProperty(m[1], el.attributes[i].value);
      }
    });
  }
  window.keelApplyCss = applyCss;

  // Live parts refresh by morphing (hx-swap="morph:innerHTML"): the elements a reader holds stay
  // the same elements, so a click mid-refresh lands, a half-typed answer or reason stays typed
  // (the focused field keeps its value), and what the reader opened stays open. The server's
  // markup carries no style (the CSSOM sets it from data-css-*) and no details' open state.
  if (window.Idiomorph) {
    Idiomorph.defaults.ignoreActiveValue = true;
    Idiomorph.defaults.callbacks.beforeAttributeUpdated = function (name, element, how) {
      if (name === "style") return false;
      if (name === "open" && element.tagName === "DETAILS") return false;
      return true;
    };
  }
  applyCss(document.documentElement);  // deferred: the document is parsed by now
  new MutationObserver(function (mutations) {
    mutations.forEach(function (m) {
      if (m.type === "attributes") applyCss(m.target);
      else m.addedNodes.forEach(applyCss);
    });
  }).observe(document.documentElement, { childList: true, subtree: true, attributes: true,
                                        attributeFilter: ["data-css-width", "data-css-left", "data-css-max-width"] });

  // The collapsed menu on small screens: the toggle opens and closes it; Escape closes it.
  document.addEventListener("DOMContentLoaded", function () {
    var toggle = document.querySelector(".menu-toggle");
    var menu = document.getElementById("main-menu");
    if (!toggle || !menu) return;
    function set(open) {
      menu.classList.toggle("open", open);
      toggle.setAttribute("aria-expanded", open ? "true" : "false");
    }
    toggle.addEventListener("click", function () { set(!menu.classList.contains("open")); });
    document.addEventListener("keydown", function (e) {
      if (e.key === "Escape" && menu.classList.contains("open")) { set(false); toggle.focus(); }
    });
  });

  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("wiring-check");
    if (!button) return;
    var result = document.getElementById("wiring-result");
    var started = {}, arrived = {};
    function show(id) {
      if (!(id in started) || !(id in arrived)) return;  // the push may beat the POST's answer
      var ms = Math.round(arrived[id].at - started[id]);
      result.className = "ok";
      result.textContent = keelWord("wiring_done", { ms: ms, worker: arrived[id].msg.worker });
    }
    keelSocket("/ws/tenant/", function (msg) {
      if (msg.type !== "wiring.done") return;
      arrived[msg.check_id] = { at: performance.now(), msg: msg };
      show(msg.check_id);
    }, function () { button.disabled = false; });
    button.disabled = true;
    button.addEventListener("click", function () {
      result.className = "muted";
      result.textContent = keelWord("wiring_waiting");
      var t0 = performance.now();
      fetch("/api/v1/wiring-checks/", { method: "POST", headers: { "X-CSRFToken": csrfToken() }, credentials: "same-origin" })
        .then(function (r) { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
        .then(function (check) { started[check.id] = t0; show(check.id); })
        .catch(function (err) { result.className = "notice-error"; result.textContent = keelWord("wiring_failed", { error: err.message }); });
    });
  });
})();
