package api

import (
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// checkUTF8 refuses (422) a request whose query or form body holds text
// that is not valid UTF-8 (decisions.md 8): it would be stored as it is on
// SQLite and fail PostgreSQL's encoding check. A JSON body is checked
// whole (encoding/json would turn bad bytes into U+FFFD silently); a
// multipart body is checked in parseForm as it is read, and the CSV of an
// upload row by row by the import.
func checkUTF8(c *fiber.Ctx) error {
	if c.Context().QueryArgs().Len() == 0 && len(c.Request().Header.ContentType()) == 0 {
		return c.Next() // nothing to check: no query, and a body without a type is not read
	}
	walks := []func(func(k, v []byte)){c.Context().QueryArgs().VisitAll}
	jsonBad := false
	if c.Path() != UploadPath {
		ct := strings.ToLower(string(c.Request().Header.ContentType()))
		switch {
		case strings.HasPrefix(ct, fiber.MIMEApplicationForm):
			walks = append(walks, c.Request().PostArgs().VisitAll)
		case strings.HasPrefix(ct, fiber.MIMEApplicationJSON):
			jsonBad = !utf8.Valid(c.Body())
		}
	}
	if key, bad := service.FindNotUTF8(walks...); bad {
		return fail(c, service.NotUTF8(key))
	}
	if jsonBad {
		return fail(c, service.NotUTF8(""))
	}
	return c.Next()
}
