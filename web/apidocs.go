package web

import (
	"github.com/gofiber/fiber/v2"

	"herald/views"
	"herald/views/apidocs"
)

// apidocsCSP is the console's policy with inline style attributes allowed,
// as on the editor's page: Swagger UI (React) sets style attributes as it
// renders. Scripts stay this site's own files only, with no eval.
const apidocsCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// swaggerUI is the vendored renderer (static/vendor, npm swagger-ui-dist).
const swaggerUI = "/static/vendor/swagger-ui-dist-5.35.0/"

// apiDocs renders the API's OpenAPI document (GET /api/openapi.json). It
// lives at /docs/api: a path under /api (even /api-docs) would go through
// the API group's key check, which Fiber matches by plain prefix.
func (w *Web) apiDocs(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, apidocsCSP)
	p := pageOf(c, "API documentation", views.NavAPIDocs, true)
	p.Styles = []string{swaggerUI + "swagger-ui.css"}
	p.Scripts = []string{swaggerUI + "swagger-ui-bundle.js", "/static/js/apidocs.js"}
	return renderPage(c, fiber.StatusOK, p, apidocs.Page())
}
