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
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
