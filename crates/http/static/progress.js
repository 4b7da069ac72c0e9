// The connection progress page, updated in place while a sync runs.
//
// Without JavaScript the page offers a "Check again" link. With it, this
// script asks for the same page once a second and, when the sync has ended,
// swaps in the new status, title and heading: nothing reloads, focus stays
// where it was, and a screen reader hears the change once through the
// region's aria-live (a timed full-page refresh would re-read the page
// every second and cannot be stopped, WCAG 2.2.1).
(function () {
  "use strict";
  var region = document.getElementById("progress");
  if (!region || !document.getElementById("working")) {
    return;
  }
  var heading = document.querySelector("main h1");
  function poll() {
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) {
        // Signed out or gone: leave the "Check again" link to say so.
        if (!response.ok) {
          return null;
        }
        return response.text();
      })
      .then(function (html) {
        if (html === null) {
          return;
        }
        var page = new DOMParser().parseFromString(html, "text/html");
        var fresh = page.getElementById("progress");
        if (!fresh || page.getElementById("working")) {
          window.setTimeout(poll, 1000);
          return;
        }
        document.title = page.title;
        var freshHeading = page.querySelector("main h1");
        if (heading && freshHeading) {
          heading.textContent = freshHeading.textContent;
        }
        region.innerHTML = fresh.innerHTML;
      })
      .catch(function () {
        // The network blinked: try again.
        window.setTimeout(poll, 1000);
      });
  }
  window.setTimeout(poll, 1000);
})();
