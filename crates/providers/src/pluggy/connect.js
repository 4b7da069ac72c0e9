// Opens Pluggy Connect (Pluggy's own script, loaded by the page) with the
// connect token the page carries, and sends the id of the item the person
// connects, or updates, in the connect form: connecting then goes on as
// if they had pasted it, with this server's Pluggy application
// (docs/providers.md, "Pluggy"). Without this script the button stays
// hidden and a person's own application's details can be pasted.
(function () {
  "use strict";
  var holder = document.getElementById("connect-widget");
  var button = document.getElementById("connect-widget-open");
  var status = document.getElementById("connect-widget-status");
  var form = document.getElementById("connect-form");
  if (!holder || !button || !status || !form) {
    return;
  }
  holder.hidden = false;
  var sent = false;
  button.addEventListener("click", function () {
    if (sent) {
      return;
    }
    status.textContent = "";
    if (typeof window.PluggyConnect !== "function") {
      status.textContent = "Pluggy Connect did not load: reload the page, or paste your own application's details.";
      return;
    }
    var data = holder.dataset;
    var options = {
      connectToken: data.connectToken,
      includeSandbox: data.includeSandbox === "true",
      onSuccess: function (itemData) {
        if (sent) {
          return;
        }
        var item = itemData && itemData.item;
        if (!item || typeof item.id !== "string") {
          status.textContent = "Pluggy Connect gave no item: try again.";
          return;
        }
        // Sent once: another click, or the form's own button, would
        // connect the item twice.
        sent = true;
        button.disabled = true;
        Array.prototype.forEach.call(
          form.querySelectorAll("button, input[type=submit]"),
          function (other) { other.disabled = true; }
        );
        // The server's application reads it: no pair of the person's own.
        form.elements.client_id.value = "";
        form.elements.client_secret.value = "";
        form.elements.item_id.value = item.id;
        status.textContent = "Connected at Pluggy: connecting here…";
        form.submit();
      },
      onError: function (error) {
        var why = error && error.message ? " (" + error.message + ")" : "";
        // Its connect token may have run out (30 minutes): a new page
        // brings a new one.
        status.textContent = "Pluggy Connect could not connect the bank" + why + ": reload the page to try again.";
      },
      onClose: function () {
        if (!sent && !status.textContent) {
          status.textContent = "Pluggy Connect was closed before a bank was connected.";
        }
      }
    };
    if (data.updateItem) {
      options.updateItem = data.updateItem;
    }
    new window.PluggyConnect(options).init();
  });
})();
