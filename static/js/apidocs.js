// Starts Swagger UI on the console's API documentation page
// (views/apidocs). A file of its own: the console's content policy allows
// no inline script.
(function () {
  "use strict";
  function start() {
    var el = document.getElementById("swagger-ui");
    if (!el || typeof window.SwaggerUIBundle !== "function") {
      return;
    }
    var loading = el.querySelector("[data-apidocs-loading]");
    if (loading) {
      loading.remove();
    }
    window.SwaggerUIBundle({
      url: el.getAttribute("data-openapi-url"),
      domNode: el,
      deepLinking: true,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      tryItOutEnabled: false,
      validatorUrl: null, // never send the document to swagger.io
      persistAuthorization: false
    });
  }
  // Each operation's arrow button repeats what the operation's own
  // button does, and Swagger UI keeps it out of the Tab order
  // (tabindex=-1): it is a mouse's shortcut. Hidden from assistive
  // technology too, it is one control per operation for everyone.
  function hideArrows(root) {
    root.querySelectorAll('.opblock-control-arrow[tabindex="-1"]:not([aria-hidden])').forEach(function (b) {
      b.setAttribute("aria-hidden", "true");
    });
  }
  var docs = document.getElementById("swagger-ui");
  if (docs && typeof MutationObserver === "function") {
    new MutationObserver(function () { hideArrows(docs); }).observe(docs, { childList: true, subtree: true });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
