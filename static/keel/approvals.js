// The approvals inbox: a live queue, one card, decisions by click or keyboard.
// j/k move · a approve · r reject · R (shift+r) reject and replan · u undo. A key asks once before it
// decides: "a" shows "Approve this step? Press a again or Enter…"; the same key or Enter decides, Esc
// (or any other move) cancels. A tap on Approve is deliberate already; a tap on Reject asks first, with
// room for why. Safe under a thumb: a decision is held here for a few seconds with Undo before it is
// sent (so nothing is recorded, and the run does not move, until the time is up: the API's
// "decided once" stays true), and once sent the decided card stays, shown as decided, until the
// person moves on (Next, j/k, the queue) — the next card never slides in under the same buttons.
// On a phone (≤ 600 px) the queue folds into a <details> line below the card (approvals.css).
// The server renders the queue and the card (/approvals/queue/, /approvals/<id>/card/);
// this file swaps them in, and posts decisions to the same API scripts use.
(function () {
  "use strict";

  var root, queue, queueBody, fold, slot, toast;
  var asking = null;         // the decision a key asked to confirm: {action, id}, or null
  var phone = window.matchMedia ? window.matchMedia("(max-width: 600px)") : { matches: false };
  var busy = false;          // a decision in flight, until the desk has moved on: a double click decides once
  var refreshing = null;
  var wanted = null;         // the card last asked for: an older card's answer arriving later is dropped
  var held = null;           // a decision waiting to be sent: {action, id, comment, left, timer}, or null

  function $(sel, el) { return (el || document).querySelector(sel); }
  function $all(sel, el) { return Array.prototype.slice.call((el || document).querySelectorAll(sel)); }

  function items() { return $all('[data-testid="queue-item"]', queue); }
  function card() { return $("#approval-card", slot); }
  function selectedId() { var c = card(); return c ? c.dataset.approvalId : null; }
  function shownOrComing() { return wanted || selectedId(); }

  function say(text, kind) {
    toast.textContent = text;
    toast.className = "toast" + (kind ? " toast-" + kind : "");
    toast.hidden = false;
    clearTimeout(say.timer);
    say.timer = setTimeout(function () { toast.hidden = true; }, 6000);
  }

  function fetchHtml(url) {
    return fetch(url, { credentials: "same-origin", headers: { "HX-Request": "true" } }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    });
  }

  function markSelected(id, focus) {
    items().forEach(function (li) {
      var on = li.dataset.approvalId === id;
      li.classList.toggle("selected", on);
      li.setAttribute("aria-selected", on ? "true" : "false");
      if (on && focus) li.focus({ preventScroll: false });
    });
  }

  function loadCard(id, focus) {
    if (!id) return Promise.resolve();
    wanted = id;
    markSelected(id, focus);
    return fetchHtml("/approvals/" + id + "/card/").then(function (html) {
      if (id !== wanted) return;   // another card was asked for meanwhile: its answer decides
      wanted = null;
      slot.innerHTML = html;
      tick();
      reask();
      if (location.pathname !== "/approvals/" + id + "/") history.replaceState(null, "", "/approvals/" + id + "/");
    }, function (err) {
      if (id === wanted) wanted = null;
      throw err;
    });
  }

  function loadQueue() {
    var id = shownOrComing();
    return fetchHtml("/approvals/queue/" + (id ? "?selected=" + id : "")).then(function (html) {
      queueBody.innerHTML = html;
      id = shownOrComing();
      markSelected(id, document.activeElement === document.body || queue.contains(document.activeElement));
      // Keep the top bar's count true as well.
      var count = $('[data-testid="queue-count"]', queue), badge = document.querySelector('[data-testid="pending-count"]');
      if (count && badge) badge.textContent = count.textContent;
      summarise();
      tick();
    });
  }

  // Coalesce a burst of pushes into one re-read.
  function refresh(changedId) {
    if (refreshing) { refreshing.again = true; refreshing.ids.push(changedId); return; }
    refreshing = { again: false, ids: [changedId] };
    var ids = refreshing.ids;
    loadQueue().then(function () {
      if (busy) return;   // the decision in flight moves the desk on, to the next card
      var current = shownOrComing();
      if (current && ids.indexOf(current) >= 0) return loadCard(current, false);
      if (!current) { var first = items()[0]; if (first) return loadCard(first.dataset.approvalId, false); }
    }).catch(function () {}).then(function () {
      var again = refreshing.again; refreshing = null;
      if (again) refresh(null);
    });
  }

  function move(step) {
    if (held) send();   // moving on is a deliberate move: the held decision goes now
    var list = items();
    if (!list.length) return;
    var at = list.findIndex(function (li) { return li.dataset.approvalId === shownOrComing(); });
    var next = list[Math.max(0, Math.min(list.length - 1, at < 0 ? 0 : at + step))];
    loadCard(next.dataset.approvalId, true);
  }

  // The folded queue's one line (phone): "Pending 3 · next due in 2 h", kept true after each re-read.
  function summarise() {
    var count = $('[data-testid="queue-count"]', queueBody), shown = $('[data-testid="queue-summary-count"]', fold);
    if (count && shown) shown.textContent = count.textContent;
    var next = $('[data-testid="queue-next"]', fold), due = $(".queue-item .queue-due[data-deadline]", queueBody);
    if (!next) return;
    next.hidden = !due;
    if (due) $("[data-deadline]", next).dataset.deadline = due.dataset.deadline;
  }

  function refuse(c, text) {
    var message = c && $('[data-testid="decision-message"]', c);
    if (message) { message.textContent = text; message.hidden = false; }
    say(text, "error");
  }

  // Why this card cannot take this decision, or "" if it can.
  function refusal(c, action) {
    if (c.dataset.status !== "pending") return fmt("decided", { status: c.dataset.statusLabel || c.dataset.status });
    if (action === "approve" && c.dataset.refusal) return c.dataset.refusal;
    return "";
  }

  // The keyboard asks once: show the question in the card's action bar, mark the button it would press.
  function ask(action, tap) {
    var c = card();
    if (!c || busy) return;
    var why = refusal(c, action);
    if (why) { cancel(false); refuse(c, why); return; }   // nothing to confirm: say at once why not
    if (!$('[data-action="' + action + '"]', c)) return;
    asking = { action: action, id: c.dataset.approvalId, tap: !!tap };
    showAsk(c);
  }
  function showAsk(c) {
    var prompt = $('[data-testid="decision-confirm"]', c), rejecting = asking.action !== "approve";
    $all("[data-action]", c).forEach(function (b) { b.classList.toggle("confirming", b.dataset.action === asking.action); });
    var box = $('[data-testid="reject-confirm"]', c);
    if (box) box.hidden = !rejecting;
    if (!prompt) return;
    var name = "ask" + asking.action.charAt(0).toUpperCase() + asking.action.slice(1);
    prompt.textContent = fmt(rejecting && asking.tap ? name + "Tap" : name, {});
    prompt.className = "decision-confirm";
    prompt.hidden = false;
    clearTimeout(showAsk.timer);
    if (rejecting && asking.tap) $('[data-testid="reject-reason"]', c).focus();
  }
  function cancel(tell) {
    if (!asking) return;
    asking = null;
    var c = card();
    if (!c) return;
    $all("[data-action]", c).forEach(function (b) { b.classList.remove("confirming"); });
    var box = $('[data-testid="reject-confirm"]', c);
    if (box) box.hidden = true;
    var prompt = $('[data-testid="decision-confirm"]', c);
    if (!prompt) return;
    if (!tell) { prompt.hidden = true; return; }
    prompt.textContent = fmt("cancelled", {});
    prompt.className = "decision-confirm decision-cancelled";
    clearTimeout(showAsk.timer);
    showAsk.timer = setTimeout(function () { if (!asking) prompt.hidden = true; }, 3000);
  }
  // A card re-read while a question is open: ask again if it is still the same pending card;
  // if someone else decided it meanwhile, say so instead of leaving a question nobody can answer.
  function reask() {
    if (!asking) return;
    var c = card();
    if (!c || c.dataset.approvalId !== asking.id) { asking = null; return; }
    var why = refusal(c, asking.action);
    if (why) { asking = null; refuse(c, why); return; }
    showAsk(c);
  }

  // Hold the decision on the card for a few seconds, with Undo, before it is sent.
  function decide(action) {
    var c = card();
    if (!c || busy) return;
    var reason = (($('[data-testid="reject-reason"]', c) || {}).value || "").trim();
    cancel(false);
    var why = refusal(c, action);
    if (why) { refuse(c, why); return; }
    var button = $('[data-action="' + action + '"]', c);
    if (!button) return;
    busy = true;
    $all("[data-action]", c).forEach(function (b) { b.disabled = true; });
    button.setAttribute("aria-busy", "true");
    var comment = action === "approve" ? "" : reason;
    comment = comment || ($("#decision-comment", c) || {}).value || "";
    held = { action: action, id: c.dataset.approvalId, comment: comment, left: HOLD_SECONDS };
    showHeld(c);
    held.timer = setInterval(function () {
      if (!held) return;
      held.left -= 1;
      if (held.left <= 0) send(); else showHeld(card());
    }, 1000);
  }
  function showHeld(c) {
    var line = c && $('[data-testid="decision-held"]', c);
    if (!line || !held || c.dataset.approvalId !== held.id) return;
    var name = "held" + held.action.charAt(0).toUpperCase() + held.action.slice(1);
    $('[data-testid="held-text"]', line).textContent = fmt(name, { s: held.left });
    line.hidden = false;
  }
  // Undo: nothing was sent, so nothing was decided; the card is read again as it is.
  function undo() {
    if (!held) return;
    clearInterval(held.timer);
    var id = held.id;
    held = null;
    busy = false;
    loadCard(id, false).then(function () {
      var prompt = $('[data-testid="decision-confirm"]', card());
      if (!prompt) return;
      prompt.textContent = fmt("undone", {});
      prompt.className = "decision-confirm decision-cancelled";
      prompt.hidden = false;
    }).catch(function () {});
  }

  function send(leaving) {
    var h = held;
    if (!h) return;
    clearInterval(h.timer);
    held = null;
    var c = card();
    var summary = c && c.dataset.approvalId === h.id ? ($('[data-testid="card-summary"]', c) || {}).textContent : "";
    var line = c && $('[data-testid="decision-held"]', c);
    if (line && c.dataset.approvalId === h.id) line.hidden = true;
    var body = { comment: h.comment };
    if (h.action === "replan") body.replan = true;
    // Leaving the page sends what was held (keepalive outlives the page): the person saw it pending.
    fetch("/api/v1/approvals/" + h.id + "/" + (h.action === "approve" ? "approve" : "reject") + "/", {
      method: "POST", credentials: "same-origin", keepalive: !!leaving,
      headers: { "Content-Type": "application/json", "X-CSRFToken": window.keelCsrfToken() },
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) { return { status: r.status, data: data }; });
    }).then(function (res) {
      if (leaving) return;
      if (res.status === 200) {
        say(fmt(h.action, {}) + (summary ? ": " + summary : ""), "ok");
        // The decided card stays, shown as decided, with Next: moving on is the person's move.
        return loadQueue().then(function () {
          if (shownOrComing() === h.id) return loadCard(h.id, false);
        }).catch(function () {}).then(function () { busy = false; });
      }
      busy = false;
      var text = (res.data && res.data.detail) || fmt("failed", { status: res.status });
      if (shownOrComing() !== h.id) { say(text, "error"); return; }
      return loadCard(h.id, false).then(function () { refuse(card(), text); });
    }, function (err) {
      busy = false;
      if (leaving) return;
      var again = card();
      refuse(again, fmt("unsent", { error: err.message }));
      if (again && again.dataset.approvalId === h.id) loadCard(h.id, false).catch(function () {});
    });
  }

  // Next: the first waiting card other than the one shown.
  function next() {
    var current = shownOrComing();
    var other = items().filter(function (li) { return li.dataset.approvalId !== current; })[0];
    if (!other) { say(fmt("empty", {}), ""); return; }
    loadCard(other.dataset.approvalId, true);
  }

  // "waited 4 min", "due in 2 h" stay true without a reload, in the page's language: the
  // formats are the server's translations, on #approvals-inbox as data-fmt-* ("%(m)d min" → "%(m)d 分钟").
  var FORMATS = { s: "%(s)d s", m: "%(m)d min", h: "%(h)d h", hm: "%(h)d h %(m)d min", d: "%(d)d d",
                  dh: "%(d)d d %(h)d h", in: "in %(duration)s", overdue: "overdue", due: "due %(due)s",
                  approve: "Approved", reject: "Rejected", replan: "Rejected (replanning)",
                  decided: "This approval is %(status)s: it can no longer be decided. The first decision stands.",
                  failed: "The decision failed (HTTP %(status)d).",
                  reminded: "Reminder: “%(summary)s” is due in %(left)s.",
                  unsent: "The decision could not be sent: %(error)s. Nothing was decided; try again.",
                  askApprove: "Approve this step? Press a again or Enter to approve; Esc cancels.",
                  askReject: "Reject this step? Press r again or Enter to reject; Esc cancels.",
                  askReplan: "Reject this step and ask for another plan? Press Shift+R again or Enter to confirm; Esc cancels.",
                  cancelled: "Cancelled: nothing was decided.",
                  askRejectTap: "Reject this step? Say why if you like (optional), then confirm.",
                  askReplanTap: "Reject this step and ask for another plan? Say why if you like (optional), then confirm.",
                  heldApprove: "Approving in %(s)d s — undo it now if this is the wrong card.",
                  heldReject: "Rejecting in %(s)d s — undo it now if this is the wrong card.",
                  heldReplan: "Rejecting (replanning) in %(s)d s — undo it now if this is the wrong card.",
                  undone: "Undone: nothing was decided.", empty: "Nothing else is waiting for a decision." };
  var HOLD_SECONDS = 5;
  function fmt(name, values) {
    var key = "fmt" + name.charAt(0).toUpperCase() + name.slice(1);
    var format = (root && root.dataset[key]) || FORMATS[name];
    return format.replace(/%\((\w+)\)[ds]/g, function (all, k) { return k in values ? values[k] : all; });
  }
  function duration(seconds) {
    seconds = Math.max(0, Math.floor(seconds));
    if (seconds < 60) return fmt("s", { s: seconds });
    var m = Math.floor(seconds / 60);
    if (m < 60) return fmt("m", { m: m });
    var h = Math.floor(m / 60); m = m % 60;
    if (h < 24) return m ? fmt("hm", { h: h, m: m }) : fmt("h", { h: h });
    var d = Math.floor(h / 24); h = h % 24;
    return h ? fmt("dh", { d: d, h: h }) : fmt("d", { d: d });
  }
  function tick() {
    var now = Date.now();
    $all("[data-since]", root).forEach(function (el) { el.textContent = duration((now - Date.parse(el.dataset.since)) / 1000); });
    $all("[data-deadline]", root).forEach(function (el) {
      if (!el.dataset.deadline) return;
      var left = (Date.parse(el.dataset.deadline) - now) / 1000;
      var text = left > 0 ? fmt("in", { duration: duration(left) }) : fmt("overdue", {});
      el.textContent = el.classList.contains("queue-due") ? fmt("due", { due: text }) : text;
      el.classList.toggle("overdue", left <= 0);
    });
  }

  function typing(target) {
    return target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
  }

  document.addEventListener("DOMContentLoaded", function () {
    root = document.getElementById("approvals-inbox");
    if (!root) return;
    queue = document.getElementById("approval-queue");
    queueBody = document.getElementById("approval-queue-body") || queue;
    fold = $(".queue-fold", queue) || queue;
    slot = document.getElementById("approval-card-slot");
    toast = document.getElementById("inbox-toast");
    var live = root.dataset.live === "1";
    HOLD_SECONDS = parseInt(root.dataset.holdSeconds, 10) || HOLD_SECONDS;
    window.addEventListener("pagehide", function () { if (held) send(true); });

    queue.addEventListener("click", function (e) {
      var li = e.target.closest('[data-testid="queue-item"]');
      if (!li) return;
      e.preventDefault();
      // The card already shown is not read again: a reload under the pointer would swallow the
      // next click on it and wipe a comment being typed (a change to it re-reads it anyway).
      if (li.dataset.approvalId === selectedId() && !wanted) {
        markSelected(li.dataset.approvalId, !phone.matches);
        if (phone.matches) { fold.open = false; slot.scrollIntoView({ block: "start" }); }
        return;
      }
      cancel(false);
      if (held) send();   // picking another card is a deliberate move: the held decision goes now
      if (!phone.matches) { loadCard(li.dataset.approvalId, true); return; }
      // On a phone the list folds away again and the chosen card comes into view.
      loadCard(li.dataset.approvalId, false).then(function () {
        fold.open = false;
        slot.scrollIntoView({ block: "start" });
      });
    });
    // Folded on a phone, open on wider screens; turning the phone or resizing follows suit.
    function fit() { if (fold.tagName === "DETAILS") fold.open = !phone.matches; }
    fit();
    if (phone.addEventListener) phone.addEventListener("change", fit);
    slot.addEventListener("click", function (e) {
      if (e.target.closest("[data-undo]")) { undo(); return; }
      if (e.target.closest("[data-next]")) { next(); return; }
      var yes = e.target.closest("[data-confirm]");
      if (yes) {
        if (yes.dataset.confirm === "yes" && asking) decide(asking.action); else cancel(true);
        return;
      }
      var b = e.target.closest("[data-action]");
      if (!b || b.disabled) return;
      // Approve decides (held, with Undo); Reject and Reject-and-replan ask first.
      if (b.dataset.action === "approve") { cancel(false); decide("approve"); } else { cancel(false); ask(b.dataset.action, true); }
    });
    // Enter in the reason confirms the reject it was asked for.
    slot.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && e.target.closest('[data-testid="reject-reason"]') && asking) {
        e.preventDefault();
        decide(asking.action);
      }
    });
    // The decision form is sent by the buttons above, never by the browser
    // (this was an inline onsubmit="return false", which the CSP forbids).
    slot.addEventListener("submit", function (e) {
      if (e.target.closest('[data-testid="decision-form"]')) e.preventDefault();
    });
    if (live) {
      document.addEventListener("keydown", function (e) {
        if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
        var key = e.key;
        if (key === "Shift" || key === "CapsLock") return;   // the Shift of ⇧R is no answer to a question
        if (held && (key === "u" || key === "Escape")) { e.preventDefault(); undo(); return; }
        if (held && (key === "a" || key === "r" || key === "R" || key === "Enter")) { e.preventDefault(); return; }
        var action = key === "a" ? "approve" : key === "r" ? "reject" : key === "R" ? "replan" : null;
        if (action && e.repeat) { e.preventDefault(); return; }   // a key held down asks once, and decides nothing
        if (asking) {
          // A question is open: its own key or Enter decides, Esc cancels, anything else asks anew or moves on.
          if ((action && action === asking.action) || key === "Enter") {
            e.preventDefault();
            var c = card();
            if (c && c.dataset.approvalId === asking.id) decide(asking.action); else cancel(false);
            return;
          }
          if (key === "Escape") { e.preventDefault(); cancel(true); return; }
          if (!action) cancel(false);
        }
        if (key === "j" || key === "ArrowDown") { e.preventDefault(); move(1); }
        else if (key === "k" || key === "ArrowUp") { e.preventDefault(); move(-1); }
        else if (action) { e.preventDefault(); ask(action); }
      });
      window.keelSocket("/ws/approvals/", function (msg) {
        if (msg.type === "approval.reminded") say(fmt("reminded", { summary: msg.summary, left: duration(msg.seconds_left) }), "warn");
        if (msg.type === "approval.changed" || msg.type === "approval.reminded") refresh(msg.approval);
      }, function () { root.dataset.socket = "open"; refresh(null); });
      var first = $(".queue-item.selected", queue);
      if (first) first.focus();
    }
    tick();
    setInterval(tick, 15000);
  });
})();
