/* evalkit view: the page of a run still being answered reloads when the store has more of it.
   Part of evalkit (MIT). Everything else works without JavaScript. */
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var url = live.getAttribute("data-progress-url");
  var seen = live.getAttribute("data-progress-state");
  var every = Math.max(2, parseInt(live.getAttribute("data-refresh-seconds"), 10) || 5) * 1000;
  function poll() {
    fetch(url, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (progress) {
        if (progress && progress.state !== seen) { window.location.reload(); } else { window.setTimeout(poll, every); }
      })
      .catch(function () { window.setTimeout(poll, every * 2); });
  }
  window.setTimeout(poll, every);
}());
