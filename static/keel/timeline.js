// The timeline page: tells the reader when new events arrived (the stream itself
// lives in console.js), and toggles a frame's payload once it has been loaded.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var banner = document.getElementById("timeline-live");
    if (!banner) return;
    var count = 0;
    document.addEventListener("keel:event", function () {
      count += 1;
      banner.hidden = false;
      banner.querySelector("span").textContent = count === 1 ? keelWord("new_event") : keelWord("new_events", { count: count });
    });
    banner.querySelector("a").addEventListener("click", function (e) { e.preventDefault(); location.reload(); });
  });

  // A second click on "payload" hides what the first one loaded.
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest('[data-testid="payload-button"]');
    if (!button) return;
    var row = button.closest(".frame-row");
    var box = row && row.querySelector(".frame-payload");
    if (box && box.children.length) { e.stopImmediatePropagation(); e.preventDefault(); box.innerHTML = ""; }
  }, true);
})();
