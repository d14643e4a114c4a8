// The live conversation: a resumable event stream, the run panel and the chat.
//
// The stream: on every (re)connect the page sends {"after": lastSeq}; the server
// replays what was missed, then pushes live events. The page applies each
// sequence number once (duplicates are dropped), and if a number is skipped it
// fetches the gap from /api/v1/conversations/{id}/events/?after=N.
(function () {
  "use strict";

  function csrfToken() {
    var headers = document.body.getAttribute("hx-headers");
    try { return JSON.parse(headers)["X-CSRFToken"]; } catch (e) { return ""; }
  }

  function conversationStream(conversationId, lastSeq, onEvent, onState) {
    var proto = location.protocol === "https:" ? "wss://" : "ws://";
    var url = proto + location.host + "/ws/conversations/" + conversationId + "/";
    var state = { lastSeq: lastSeq, seqs: [], socket: null, held: false, delay: 250, refused: null, fetching: false };

    function apply(event) {
      if (event.seq <= state.lastSeq) return;  // seen already
      if (event.seq > state.lastSeq + 1) { fetchGap(); return; }
      state.lastSeq = event.seq;
      state.seqs.push(event.seq);
      try { onEvent(event); } catch (err) { console.error(err); }
    }

    function fetchGap() {
      if (state.fetching) return;
      state.fetching = true;
      fetch("/api/v1/conversations/" + conversationId + "/events/?after=" + state.lastSeq, { credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : { results: [] }; })
        .then(function (body) { state.fetching = false; body.results.forEach(apply); })
        .catch(function () { state.fetching = false; });
    }

    function open() {
      if (state.held || state.refused) return;
      var socket = new WebSocket(url);
      state.socket = socket;
      socket.onopen = function () {
        state.delay = 250;
        socket.send(JSON.stringify({ after: state.lastSeq }));
        if (onState) onState("live");
      };
      socket.onmessage = function (e) {
        var msg = JSON.parse(e.data);
        if (msg.type === "timeline.event") apply(msg.event);
      };
      socket.onclose = function (e) {
        if (state.socket !== socket) return;
        state.socket = null;
        if (e.code === 4403 || e.code === 4404) {  // refused: retrying will not help
          state.refused = e.code;
          if (onState) onState("refused");
          return;
        }
        if (onState) onState("reconnecting");
        if (!state.held) { setTimeout(open, state.delay); state.delay = Math.min(state.delay * 2, 5000); }
      };
    }

    open();
    return {
      state: state,
      // For tests and the "offline" case: drop the socket and stay down until reconnect().
      drop: function () { state.held = true; if (state.socket) state.socket.close(); },
      reconnect: function () { state.held = false; if (!state.socket) open(); }
    };
  }

  window.keelConversationStream = conversationStream;

  // --- the run panel ---------------------------------------------------------------------------
  var refreshTimer = null;
  // The panel and what refreshes with it (a run page's waits): each marked data-refreshed.
  function panelRefresh() {
    if (!window.htmx || !document.querySelector("[data-refreshed]")) return;
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(function () {
      document.querySelectorAll("[data-refreshed]").forEach(function (part) { htmx.trigger(part, "keel:refresh"); });
    }, 120);
  }

  var chatTimer = null;
  function chatRefresh(conversationId) {
    var list = document.getElementById("chat-messages");
    if (!list || !window.htmx) return;
    clearTimeout(chatTimer);
    chatTimer = setTimeout(function () {
      htmx.ajax("GET", "/conversations/" + conversationId + "/chat/", { target: list, swap: "innerHTML" })
        .then(function () { list.scrollTop = list.scrollHeight; });
    }, 120);
  }

  // A reply streams in as message.delta events before the whole reply lands.
  function chatStream(data) {
    var list = document.getElementById("chat-messages");
    if (!list || !data.text) return;
    // A piece pushed after the whole reply is shown (the list refreshed first) starts no second bubble.
    if (list.querySelector('[data-reply-of="' + CSS.escape(String(data.activity)) + '"]')) return;
    var bubble = list.querySelector('.bubble-keel[data-streaming="' + CSS.escape(String(data.activity)) + '"]');
    if (!bubble) {
      bubble = document.createElement("div");
      bubble.className = "bubble bubble-keel streaming";
      bubble.setAttribute("data-streaming", String(data.activity));
      var label = document.createElement("span");
      label.className = "who-label"; label.textContent = "Keel";
      bubble.appendChild(label);
      list.appendChild(bubble);
    }
    bubble.appendChild(document.createTextNode(data.text));
    list.scrollTop = list.scrollHeight;
  }

  function nodePaint(key, status) {
    document.querySelectorAll('.dag-node[data-node="' + CSS.escape(key) + '"]').forEach(function (g) {
      g.setAttribute("class", g.getAttribute("class").replace(/\bstatus-[a-z_]+/, "status-" + status));
      g.setAttribute("data-status", status);
      var label = g.querySelector(".dag-status");
      var labels = JSON.parse(g.closest(".dag").getAttribute("data-labels") || "{}");
      if (label) label.textContent = labels[status] || status.replace(/_/g, " ");
    });
  }

  function onEvent(event, conversationId) {
    var panelRunId = (document.querySelector("#run-panel [data-run-id]") || {}).getAttribute
      ? document.querySelector("#run-panel [data-run-id]").getAttribute("data-run-id") : "";
    if (event.type === "node.status" && event.run === panelRunId) nodePaint(event.data.node, event.data.to);
    if (event.type === "message.delta") chatStream(event.data);
    else if (event.type.indexOf("message.") === 0) chatRefresh(conversationId);
    if (event.run || event.type.indexOf("run.") === 0) panelRefresh();
    document.dispatchEvent(new CustomEvent("keel:event", { detail: event }));
  }

  // --- the chat --------------------------------------------------------------------------------
  function chatSetUp(form, conversationId) {
    var root = document.querySelector("[data-live]");
    var status = document.getElementById("chat-status");
    var list = document.getElementById("chat-messages");
    var file = form.querySelector('input[type="file"]');
    var fileName = form.querySelector('[data-testid="attachment-name"]');
    var textarea = form.querySelector("textarea");
    file.addEventListener("change", function () {
      fileName.textContent = file.files.length ? file.files[0].name : keelWord("attach");
    });
    textarea.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
    });
    function say(text, cls) { status.textContent = text; status.className = "chat-status " + (cls || ""); }
    function bubble(text, cls, who) {
      var div = document.createElement("div");
      div.className = "bubble " + cls;
      var label = document.createElement("span");
      label.className = "who-label"; label.textContent = who;
      div.appendChild(label); div.appendChild(document.createTextNode(text));
      var empty = list.querySelector(".chat-empty"); if (empty) empty.remove();
      list.appendChild(div); list.scrollTop = list.scrollHeight;
    }
    // The reply as the answer carries it, unless the pushed events already refreshed the list
    // with it: shown once, in place of its streamed pieces.
    function replyShow(answer) {
      var of = String(answer.activity_id || "");
      if (of && list.querySelector('[data-reply-of="' + CSS.escape(of) + '"]')) return;
      var streamed = of && list.querySelector('.bubble-keel[data-streaming="' + CSS.escape(of) + '"]');
      bubble(answer.reply, "bubble-keel", "Keel");
      var shown = list.lastElementChild;
      if (of) shown.setAttribute("data-reply-of", of);
      if (streamed) { streamed.replaceWith(shown); }
    }
    // An option in the chat answers as if the user had typed its label.
    list.addEventListener("click", function (e) {
      var option = e.target.closest && e.target.closest(".option-button");
      if (!option) return;
      textarea.value = option.getAttribute("data-answer");
      form.requestSubmit();
    });
    form.addEventListener("submit", function (e) {
      e.preventDefault();
      var text = textarea.value.trim();
      if (!text) return;
      var body = new FormData();
      body.append("text", text);
      if (file.files.length) body.append("attachment", file.files[0]);
      // One Idempotency-Key per message: sent again unchanged after a lost answer, it is posted once.
      var sent = text + "\u0000" + (file.files.length ? file.files[0].name + ":" + file.files[0].size : "");
      if (form.dataset.sent !== sent) {
        form.dataset.sent = sent;
        form.dataset.key = window.crypto && crypto.randomUUID ? crypto.randomUUID()
          : Date.now().toString(36) + "-" + Math.random().toString(36).slice(2);
      }
      var button = form.querySelector('button[type="submit"]');
      button.setAttribute("aria-busy", "true"); button.disabled = true;
      bubble(text, "bubble-user pending", root.getAttribute("data-user-name") || keelWord("you"));
      say(keelWord("working"), "muted");
      // A message with a file goes to the chat's upload door (the cap of its largest kind of file).
      fetch(form.getAttribute(file.files.length ? "data-upload-url" : "data-url"), { method: "POST", body: body, credentials: "same-origin",
                                             headers: { "X-CSRFToken": csrfToken(), "Accept": "application/json",
                                                        "Idempotency-Key": form.dataset.key } })
        .then(function (r) { return r.json().catch(function () { return {}; }).then(function (j) { return { r: r, j: j }; }); })
        .then(function (res) {
          if (res.r.status === 404 && /No API endpoint/.test(res.j.detail || "")) {
            say(keelWord("no_service"), "notice-error");
            return;
          }
          if (!res.r.ok) { say(res.j.detail || keelWord("message_refused", { status: res.r.status }), "notice-error"); return; }
          textarea.value = ""; file.value = ""; fileName.textContent = keelWord("attach");
          delete form.dataset.sent; delete form.dataset.key;  // the next message is a new one, even with the same words
          say("", "");
          if (res.j.reply) replyShow(res.j);
          chatRefresh(conversationId);
          panelRefresh();
        })
        .catch(function (err) { say(keelWord("message_unsent", { error: err.message }), "notice-error"); })
        .finally(function () { button.removeAttribute("aria-busy"); button.disabled = false; });
    });
  }

  // --- the answer box (a run waiting for the user's input) --------------------------------------
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches || !form.matches(".answer-form")) return;
    e.preventDefault();
    // An option button submits its own value; a typed answer comes from the text box.
    var answer = e.submitter && e.submitter.name === "answer" ? e.submitter.value
      : form.querySelector('input[name="answer"]').value;
    fetch(form.getAttribute("data-url"), { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: JSON.stringify({ answer: answer }) })
      .then(function (r) { return r.json().then(function (j) { return { r: r, j: j }; }); })
      .then(function (res) {
        if (!res.r.ok) { alert(res.j.detail || keelWord("answer_refused")); return; }
        panelRefresh();
        chatRefresh(document.querySelector("[data-live]").getAttribute("data-conversation-id"));
      });
  });

  // --- run control: cancel and retry, with a reason (the API checks who may) ---------------------
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.matches || !form.matches(".run-control")) return;
    e.preventDefault();
    var action = (e.submitter && e.submitter.value) || "cancel";
    if (action === "cancel" && !window.confirm(keelWord("cancel_confirm"))) return;
    var reason = form.querySelector('[name="reason"]').value;
    Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = true; });
    fetch(form.getAttribute("data-run-url") + action + "/", { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken(), "Accept": "application/json" },
      body: JSON.stringify({ reason: reason }) })
      .then(function (r) { return r.json().catch(function () { return {}; }).then(function (j) { return { r: r, j: j }; }); })
      .then(function (res) {
        if (!res.r.ok) { window.alert(res.j.detail || keelWord("control_refused")); }
        panelRefresh();
      })
      .catch(function (err) { window.alert(keelWord("unreachable", { error: err.message })); })
      .finally(function () {
        Array.prototype.forEach.call(form.querySelectorAll("button"), function (b) { b.disabled = false; });
      });
  });

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.querySelector("[data-live]");
    if (!root) return;
    var conversationId = root.getAttribute("data-conversation-id");
    var lastSeq = parseInt(root.getAttribute("data-last-seq") || "0", 10);
    var indicator = document.createElement("span");
    indicator.className = "live-indicator"; indicator.setAttribute("data-testid", "live-indicator");
    indicator.textContent = keelWord("connecting");
    root.insertBefore(indicator, root.firstChild);
    var stream = conversationStream(conversationId, lastSeq, function (event) { onEvent(event, conversationId); },
      function (state) {
        indicator.textContent = keelWord(state);
        indicator.className = "live-indicator live-" + state;
      });
    window.keelConsole = stream;
    var form = document.getElementById("chat-form");
    if (form) chatSetUp(form, conversationId);
    chatShowNewest();
  });

  // The chat opens at its newest message (the news people come back for); the marker says
  // where what came since their last visit begins.
  function chatShowNewest() {
    var list = document.getElementById("chat-messages");
    if (!list) return;
    list.scrollTop = list.scrollHeight;
    var last = list.lastElementChild;
    if (last && last.getBoundingClientRect().bottom > window.innerHeight) last.scrollIntoView({ block: "end" });
  }
})();
