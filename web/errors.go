package web

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
)

// statusOf is the one table from errors to the console's statuses: the
// service's codes, Fiber's own errors (unknown route, body too large)
// and ours (CSRF); anything else is a fault of ours, 500.
func statusOf(err error) int {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		return fe.Code
	}
	switch service.ErrorCode(err) {
	case service.CodeNotFound:
		return fiber.StatusNotFound
	case service.CodeValidation:
		return fiber.StatusUnprocessableEntity
	case service.CodeConflict:
		return fiber.StatusConflict
	case service.CodeUnauthorized:
		return fiber.StatusUnauthorized
	case service.CodeForbidden:
		return fiber.StatusForbidden
	case service.CodeRateLimited:
		return fiber.StatusTooManyRequests
	case service.CodeUnavailable:
		return fiber.StatusServiceUnavailable
	}
	return fiber.StatusInternalServerError
}

// retryAfter sets Retry-After (whole seconds) when err is a rate-limited
// service error that says how long to wait.
func retryAfter(c *fiber.Ctx, err error) {
	var se *service.Error
	if errors.As(err, &se) && se.Code == service.CodeRateLimited && se.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.FormatInt(int64((se.RetryAfter+time.Second-1)/time.Second), 10))
	}
}

// fieldErrors returns the messages per field of a validation error, nil
// for any other error.
func fieldErrors(err error) views.Errors {
	var e *service.Error
	if errors.As(err, &e) && e.Code == service.CodeValidation {
		return views.Errors(e.Fields)
	}
	return nil
}

// refusedItems returns the items of a list field that a validation error
// refused (service.Error.Items), or nil.
func refusedItems(err error, field string) []string {
	var e *service.Error
	if errors.As(err, &e) && e.Code == service.CodeValidation {
		return e.Items[field]
	}
	return nil
}

// fieldProblems returns a validation error's messages per field, each
// with its reason (the console words a message by its reason, never by
// its text); nil for any other error.
func fieldProblems(err error) service.Problems {
	var e *service.Error
	if errors.As(err, &e) && e.Code == service.CodeValidation {
		return e.Problems()
	}
	return nil
}

// missingChoice reports whether a problem says a choice of the form is
// missing or names nothing the account has: the forms word both alike.
func missingChoice(pr service.Problem) bool {
	return pr.Reason == service.ReasonRequired || pr.Reason == service.ReasonInvalidChoice
}

// isValidation reports whether err is a validation error, answered with
// its form and the messages beside each field.
func isValidation(err error) bool { return service.ErrorCode(err) == service.CodeValidation }

// describe gives the title and the text shown for a failed request. The
// text of an unexpected error is never shown: it may hold internals.
func describe(status int, err error) (title, message string) {
	var se *service.Error
	isService := errors.As(err, &se)
	var fe *fiber.Error
	isFiber := errors.As(err, &fe)
	switch status {
	case fiber.StatusNotFound:
		return "Page not found", "There is nothing here. The address may be mistyped, or what it named was deleted."
	case fiber.StatusForbidden:
		if isFiber {
			return "Forbidden", fe.Message
		}
		if isService && se.Message != "" {
			return "Forbidden", se.Message
		}
		return "Forbidden", "You may not do that."
	case fiber.StatusTooManyRequests:
		if isService && se.Message != "" {
			return "Too many requests", se.Message
		}
		return "Too many requests", "Too many attempts from your address. Wait a minute and try again."
	case fiber.StatusUnprocessableEntity:
		if isService {
			var msgs []string
			for _, m := range se.Fields {
				msgs = append(msgs, m...)
			}
			if len(msgs) > 0 {
				return "Invalid input", strings.Join(msgs, " ")
			}
			if se.Message != "" {
				return "Invalid input", se.Message
			}
		}
		return "Invalid input", "The request was not valid."
	case fiber.StatusConflict:
		if isService && se.Message != "" {
			return "Conflict", se.Message
		}
	case fiber.StatusUnauthorized:
		return "Not logged in", "Log in to continue."
	case fiber.StatusRequestEntityTooLarge:
		if isFiber {
			return "Too large", fe.Message
		}
	case fiber.StatusServiceUnavailable:
		if isService && se.Message != "" {
			return "Try again later", se.Message
		}
	case fiber.StatusInternalServerError:
		return "Something went wrong", "An error on our side stopped this request. It has been logged; try again in a moment."
	}
	text := http.StatusText(status)
	if text == "" {
		text = "Error"
	}
	return text, "The request could not be answered (" + text + ")."
}

// ErrorHandler answers the errors of every path but /api: an HTML page
// with the status (404 for unknown paths), or, to htmx, a message swapped
// into the page's flash area. Faults of ours are logged, never shown.
func ErrorHandler(c *fiber.Ctx, err error) error {
	status := statusOf(err)
	title, message := describe(status, err)
	if status >= fiber.StatusInternalServerError {
		slog.ErrorContext(c.UserContext(), "console error", "method", c.Method(), "path", c.Path(), "error", err)
	}
	c.Response().ResetBody()
	retryAfter(c, err)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Vary("HX-Request")
	if partial(c) {
		c.Set("HX-Retarget", "#flash")
		c.Set("HX-Reswap", "innerHTML")
		return render(c, status, views.FlashMessage(views.Flash{Kind: views.FlashError, Message: message}))
	}
	return renderPage(c, status, pageOf(c, title, "", false), views.ErrorPage(status, title, message))
}
