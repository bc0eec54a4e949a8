// agentcontext dashboard: the login link, and live updates from the page's event stream.
"use strict";

(function () {
  // A login link is /login#token=TOKEN: the fragment never reaches the server's logs; submit it from here. That
  // signs nobody in: the answer names the account and asks.
  var form = document.getElementById("login-form");
  if (form && location.hash.indexOf("#token=") === 0) {
    var token = decodeURIComponent(location.hash.slice("#token=".length));
    history.replaceState(null, "", location.pathname); // keep the token out of the history and the address bar
    form.elements.namedItem("token").value = token;
    form.submit();
    return;
  }
  // The yes waits a moment after the question shows: a page that swaps windows under a double click cannot
  // land the second click on it.
  var yes = document.getElementById("login-yes");
  if (yes) {
    yes.disabled = true;
    setTimeout(function () { yes.disabled = false; }, 600);
  }

  var source = document.body.dataset.events;
  var pageUrl = document.body.dataset.page || location.pathname + location.search;
  var state = document.getElementById("live-state");
  if (!source || !window.EventSource) return;

  var busy = false;
  var again = false;

  // Re-read the page and replace each live fragment (an element with data-live and an id) by its new version.
  function update() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(pageUrl, { credentials: "same-origin", headers: { "Accept": "text/html" } })
      .then(function (response) {
        if (response.redirected && response.url.indexOf("/login") >= 0) { location.assign("/login"); return null; }
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live][id]").forEach(function (old) {
          var replacement = fresh.getElementById(old.id);
          if (replacement) old.replaceWith(document.importNode(replacement, true));
        });
        document.body.dataset.updated = String(Date.now());
      })
      .catch(function () { /* the next event tries again */ })
      .finally(function () {
        busy = false;
        if (again) { again = false; update(); }
      });
  }

  var events = new EventSource(source, { withCredentials: true });
  events.onopen = function () { if (state) { state.textContent = "live"; state.className = "live on"; } };
  events.onerror = function () { if (state) { state.textContent = "reconnecting"; state.className = "live off"; } };
  ["ready", "pinned", "out_of_date", "up_to_date", "refreshed", "discovered", "agent_online", "agent_offline", "snapshot", "lagged"]
    .forEach(function (kind) { events.addEventListener(kind, update); });
})();
