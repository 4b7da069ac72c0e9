// Opens Teller Connect (Teller's own script, loaded by the page) with the
// options the page gives, and sends the access token of the enrollment it
// makes, or repairs, in the connect form: connecting then goes on as if
// the person had pasted the token (docs/providers.md, "Teller"). Without
// this script the button stays hidden and the token can be pasted.
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
    if (typeof window.TellerConnect === "undefined") {
      status.textContent = "Teller Connect did not load: paste the access token instead.";
      return;
    }
    var data = holder.dataset;
    var options = {
      applicationId: data.applicationId,
      environment: data.environment,
      products: data.products.split(","),
      onSuccess: function (enrollment) {
        if (sent) {
          return;
        }
        if (!enrollment || typeof enrollment.accessToken !== "string") {
          status.textContent = "Teller Connect gave no access token: try again, or paste it.";
          return;
        }
        // Sent once: another click, or the form's own button, would
        // connect the enrollment twice.
        sent = true;
        button.disabled = true;
        Array.prototype.forEach.call(
          form.querySelectorAll("button, input[type=submit]"),
          function (other) { other.disabled = true; }
        );
        form.elements.token.value = enrollment.accessToken;
        status.textContent = "Enrolled: connecting…";
        form.submit();
      },
      onExit: function () {
        if (!sent) {
          status.textContent = "Teller Connect was closed before a bank was enrolled.";
        }
      },
      onFailure: function (failure) {
        var why = failure && failure.message ? " (" + failure.message + ")" : "";
        status.textContent = "Teller Connect could not enroll the bank" + why + ": try again, or paste an access token.";
      }
    };
    if (data.enrollmentId) {
      options.enrollmentId = data.enrollmentId;
    }
    window.TellerConnect.setup(options).open();
  });
})();
