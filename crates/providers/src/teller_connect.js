// Opens Teller Connect (Teller's own script, loaded by the page) with the
// options the page gives, and sends the access token of the enrollment it
// makes, or repairs, in the connect form: connecting then goes on as if
// the person had pasted the token (docs/providers.md, "Teller").
(function () {
  "use strict";
  var holder = document.getElementById("connect-widget");
  var button = document.getElementById("connect-widget-open");
  var status = document.getElementById("connect-widget-status");
  var form = document.getElementById("connect-form");
  if (!holder || !button || !status || !form) {
    return;
  }
  button.addEventListener("click", function () {
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
        if (!enrollment || typeof enrollment.accessToken !== "string") {
          status.textContent = "Teller Connect gave no access token: try again, or paste it.";
          return;
        }
        form.elements.token.value = enrollment.accessToken;
        status.textContent = "Enrolled: connecting…";
        form.submit();
      },
      onExit: function () {
        status.textContent = "Teller Connect was closed before a bank was enrolled.";
      }
    };
    if (data.enrollmentId) {
      options.enrollmentId = data.enrollmentId;
    }
    window.TellerConnect.setup(options).open();
  });
})();
