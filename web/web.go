// Package web is the console (pages made interactive with htmx) and the
// public pages recipients open.
package web

import (
	"context"
	"net/netip"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/limiter"
	"github.com/gorilla/sessions"

	"herald/service"
)

// Options tune the console.
type Options struct {
	BaseURL string // public address; https means Secure cookies

	// AuthPerMinute caps the POSTs to /login and /signup one client IP
	// (an IPv6 client by its /64) may make in a minute; 0 means
	// defaultAuthPerMinute. It comes on top of the service's growing
	// delays after failed logins, per address and per IP.
	AuthPerMinute int

	// TrustedProxies (HERALD_TRUSTED_PROXIES) are the reverse proxies whose
	// X-Forwarded-For is believed for the client IP; none by default.
	TrustedProxies []netip.Prefix

	// MaxUploadBytes bounds a CSV upload (HERALD_MAX_UPLOAD_MB); 0 means 1024 MB.
	MaxUploadBytes int64
	// MaxSpoolBytes bounds a file kept on disk until its contact type
	// arrives; 0 means service.MaxSpool (tests set less).
	MaxSpoolBytes int64

	// Hearing is how this herald hears back from relays and providers
	// (decisions.md 7), for the bounce setup page.
	Hearing Hearing
	// Webhooks configure the provider webhooks (hooks.go).
	Webhooks WebhookOptions
}

const defaultAuthPerMinute = 20

// Web holds what every console handler needs.
type Web struct {
	svc       *service.Service
	opt       Options
	store     *sessions.CookieStore
	authLimit fiber.Handler
	hooks     *hooks
}

// New builds the console over svc. It reads (or, the first time, makes)
// the session keys kept in the database, so that every herald process
// sharing it accepts the others' cookies.
func New(ctx context.Context, svc *service.Service, opt Options) (*Web, error) {
	store, err := newStore(ctx, svc.Settings, strings.HasPrefix(opt.BaseURL, "https://"))
	if err != nil {
		return nil, err
	}
	perMinute := opt.AuthPerMinute
	if perMinute <= 0 {
		perMinute = defaultAuthPerMinute
	}
	hk, err := newHooks(opt.Webhooks)
	if err != nil {
		return nil, err
	}
	w := &Web{svc: svc, opt: opt, store: store, hooks: hk}
	w.authLimit = limiter.New(limiter.Config{
		Max:          perMinute,
		Expiration:   time.Minute,
		KeyGenerator: func(c *fiber.Ctx) string { return service.IPKey(w.clientIP(c)) },
		LimitReached: func(*fiber.Ctx) error {
			return &service.Error{Code: service.CodeRateLimited, Message: "Too many attempts from your address. Wait a minute and try again."}
		},
	})
	return w, nil
}

// Mount registers every console route on app. All of them are listed here.
func (w *Web) Mount(app *fiber.App) {
	w.mountRecipient(app)    // before the console middleware: see tracking.go
	w.mountSenderVerify(app) // likewise: see public.go
	w.mountWebhooks(app)     // likewise: no session, no CSRF (hooks.go)
	app.Use(w.console)

	app.Get("/", w.root)
	w.mountPublic(app)
	app.Get("/login", w.loginPage)
	app.Post("/login", w.authLimit, w.login)
	app.Get("/login/code", w.loginCodePage)
	app.Post("/login/code", w.authLimit, w.loginCode)
	app.Get("/login/forgot", w.forgotPage)
	app.Post("/login/forgot", w.authLimit, w.forgot)
	app.Get("/reset/:token", w.resetPage)
	app.Post("/reset/:token", w.authLimit, w.reset)
	app.Get("/signup", w.signupGate, w.signupPage)
	app.Post("/signup", w.signupGate, w.authLimit, w.signup)
	app.Get("/signup/confirm/:token", w.signupGate, w.confirmSignupPage)
	app.Post("/signup/confirm/:token", w.signupGate, w.authLimit, w.confirmSignup)
	app.Post("/logout", w.logout)

	in := w.requireLogin
	app.Get("/dashboard", in, w.dashboard)

	app.Get("/account", in, w.account)
	app.Get("/docs/api", in, w.apiDocs)
	app.Get("/account/keys", in, w.showKeys)
	app.Post("/account/keys", in, w.rotateKeys)
	app.Post("/account/time-zone", in, w.saveTimeZone)
	app.Post("/account/checklist", in, w.saveChecklistSetting)
	app.Post("/account/password", in, w.changePassword)
	app.Post("/account/logout-everywhere", in, w.logoutEverywhere)
	app.Post("/account/api-keys", in, w.createAPIKey)
	app.Post("/account/api-keys/:id/revoke", in, w.revokeAPIKey)
	app.Get("/account/2fa", in, w.twoFactorPage)
	app.Post("/account/2fa/setup", in, w.twoFactorSetup)
	app.Post("/account/2fa/enable", in, w.twoFactorEnable)
	app.Post("/account/2fa/off", in, w.twoFactorOff)

	app.Get("/suppressions", in, func(c *fiber.Ctx) error { return c.Redirect("/suppressions/global", fiber.StatusSeeOther) })
	app.Get("/suppressions/global", in, w.listGlobal)
	app.Post("/suppressions/global", in, w.addGlobal)
	app.Post("/suppressions/global/bulk-delete", in, w.bulkDeleteGlobal)
	app.Post("/suppressions/global/:id/delete", in, w.deleteGlobal)

	app.Get("/suppressions/groups", in, w.listGroups)
	app.Post("/suppressions/groups", in, w.createGroup)
	app.Get("/suppressions/groups/:id", in, w.listGroupRecipients)
	app.Post("/suppressions/groups/:id", in, w.updateGroup)
	app.Get("/suppressions/groups/:id/edit", in, w.editGroup)
	app.Get("/suppressions/groups/:id/row", in, w.groupRow)
	app.Post("/suppressions/groups/:id/recipients", in, w.addGroupRecipients)
	app.Post("/suppressions/groups/:id/recipients/bulk-delete", in, w.bulkDeleteGroupRecipients)
	app.Post("/suppressions/groups/:id/recipients/:rid/delete", in, w.deleteGroupRecipient)

	app.Get("/suppressions/bounced", in, w.listBounced)
	app.Get("/suppressions/reports", in, w.listReports)
	app.Get("/suppressions/setup", in, w.bounceSetup)
	app.Post("/suppressions/bounced/lift", in, w.bulkLiftBounced)
	app.Post("/suppressions/bounced/:id/lift", in, w.liftBounced)

	// Audience. Fixed paths come before the /:id ones they would match.
	app.Get("/contacts", in, w.listContacts)
	app.Post("/contacts", in, w.createContact)
	app.Get("/contacts/new", in, w.newContact)
	app.Post("/contacts/bulk-delete", in, w.bulkDeleteContacts)
	app.Get("/contacts/states", in, w.states)
	app.Get("/contacts/cities", in, w.cities)

	app.Get("/contacts/types", in, w.listTypes)
	app.Post("/contacts/types", in, w.createType)
	app.Post("/contacts/types/:id", in, w.updateType)
	app.Get("/contacts/types/:id/edit", in, w.editType)
	app.Get("/contacts/types/:id/row", in, w.typeRow)
	app.Post("/contacts/types/:id/delete", in, w.deleteType)

	app.Get("/contacts/fields", in, w.listFields)
	app.Post("/contacts/fields", in, w.createField)
	app.Post("/contacts/fields/:id/delete", in, w.deleteField)

	app.Get("/contacts/export.csv", in, w.exportContacts)
	app.Get("/contacts/import", in, w.showImport)
	app.Post(UploadPath, in, w.uploadImport)
	app.Get("/contacts/import/sample.csv", in, w.sampleCSV)
	app.Get("/contacts/import/:id", in, w.importReport)
	app.Get("/contacts/import/:id/progress", in, w.importProgress)

	app.Post("/contacts/:id", in, w.updateContact)
	app.Get("/contacts/:id/edit", in, w.editContact)
	app.Get("/contacts/:id/history", in, w.contactHistory)
	app.Post("/contacts/:id/delete", in, w.deleteContact)

	app.Get("/segments", in, w.listSegments)
	app.Post("/segments", in, w.createSegment)
	app.Get("/segments/new", in, w.newSegment)
	app.Post("/segments/count", in, w.countSegment)
	app.Post("/segments/conditions", in, w.editConditions)
	app.Get("/segments/:id", in, w.listSegmentRecipients)
	app.Post("/segments/:id", in, w.updateSegment)
	app.Get("/segments/:id/edit", in, w.editSegment)
	app.Get("/segments/:id/why", in, w.whySegment)
	app.Post("/segments/:id/delete", in, w.deleteSegment)
	app.Post("/segments/:id/recipients", in, w.addSegmentRecipient)
	app.Post("/segments/:id/recipients/:rid/delete", in, w.deleteSegmentRecipient)

	app.Get("/senders", in, w.listSenders)
	app.Post("/senders", in, w.createSender)
	app.Get("/senders/new", in, w.newSender)
	app.Get("/senders/states", in, w.senderStates)
	app.Get("/senders/cities", in, w.senderCities)
	app.Get("/senders/:id", in, w.showSender)
	app.Post("/senders/:id", in, w.updateSender)
	app.Get("/senders/:id/edit", in, w.editSender)
	app.Post("/senders/:id/resend", in, w.resendSender)
	app.Post("/senders/:id/delete", in, w.deleteSender)
	app.Post("/senders/:id/check", in, w.checkSender)
	app.Post("/senders/:id/sign-anyway", in, w.signAnywaySender)
	app.Post("/senders/:id/sending-ips", in, w.sendingIPsSender)
	app.Post("/senders/:id/rotate-key", in, w.rotateSender)

	app.Get("/outbox", in, w.listOutbox)
	app.Get("/outbox/:id", in, w.showOutboxMessage)
	app.Get("/outbox/:id/raw", in, w.rawOutboxMessage)

	app.Get("/templates", in, w.gallery)
	app.Get("/templates/editor", in, w.newDesign)
	app.Get("/templates/library/:id/preview", in, w.previewLibrary)
	app.Post("/templates/designs", in, w.createDesign)
	app.Post("/templates/designs/:id", in, w.updateDesign)
	app.Get("/templates/designs/:id/edit", in, w.editDesign)
	app.Get("/templates/designs/:id/preview", in, w.previewDesign)
	app.Post("/templates/designs/:id/delete", in, w.deleteDesign)

	// Single sends. Fixed paths come before the /:utr ones they would match.
	app.Get("/single-sends", in, w.listSends)
	app.Post("/single-sends", in, w.createSend)
	app.Get("/single-sends/new", in, w.newSend)
	app.Post("/single-sends/bulk-delete", in, w.bulkDeleteSends)
	app.Post("/single-sends/count", in, w.countSendAudience)
	app.Post("/single-sends/checklist", in, w.checkSend)
	app.Post("/single-sends/validate", in, w.validateSend)
	app.Get("/single-sends/:utr/recipients.csv", in, w.exportSendRecipients)
	app.Get("/single-sends/:utr/statistics.csv", in, w.exportSendStatistics)
	app.Post("/single-sends/group", in, w.createSendGroup)
	app.Post("/single-sends/test", in, w.testSend)
	app.Post("/single-sends/draft", in, w.saveDraft)
	app.Get("/single-sends/calendar", in, w.sendsCalendar)
	app.Get("/single-sends/preview", in, w.previewSendDesign)
	app.Get("/single-sends/:utr", in, w.showSend)
	app.Post("/single-sends/:utr", in, w.updateSend)
	app.Get("/single-sends/:utr/edit", in, w.editSend)
	app.Get("/single-sends/:utr/progress", in, w.sendProgress)
	app.Post("/single-sends/:utr/duplicate", in, w.duplicateSend)
	app.Post("/single-sends/:utr/delete", in, w.deleteSend)
	app.Post("/single-sends/:utr/resume", in, w.resumeSend)

	app.Get("/notifications", in, w.listNotifications)
	app.Post("/notifications", in, w.addNotification)
	app.Post("/notifications/bulk-delete", in, w.bulkDeleteNotifications)
	app.Post("/notifications/:id/delete", in, w.deleteNotification)

	w.mountAutomations(app, in)
	w.mountEventWebhooks(app, in)
}

// checkUTF8 refuses (422) a query or URL-encoded form whose text is not
// valid UTF-8 (decisions.md 8); the upload's CSV is checked row by row.
func checkUTF8(c *fiber.Ctx) error {
	walks := []func(func(k, v []byte)){c.Context().QueryArgs().VisitAll}
	if strings.HasPrefix(strings.ToLower(string(c.Request().Header.ContentType())), fiber.MIMEApplicationForm) {
		walks = append(walks, c.Request().PostArgs().VisitAll)
	}
	if key, bad := service.FindNotUTF8(walks...); bad {
		return service.NotUTF8(key)
	}
	return nil
}

// contentSecurityPolicy allows only this site's own files: no inline
// script or style, no eval (htmx is told not to use it), no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// console runs around every path but the API's and the static files':
// it loads the session, checks the CSRF token of state-changing
// requests, sets the headers every page shares, and saves the session
// after the handler when it changed.
func (w *Web) console(c *fiber.Ctx) error {
	p := c.Path()
	if p == "/api" || strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/static/") {
		return c.Next()
	}
	// The CSV upload is a stream: neither the session nor the CSRF check
	// may read its body (see imports.go).
	upload := isUpload(c)
	var s *session
	var err error
	if upload {
		s = w.loadUploadSession(c)
		err = w.checkLogin(c, s)
	} else {
		s, err = w.loadSession(c)
	}
	if err != nil {
		return err
	}
	c.Locals(localSession, s)
	c.Vary("HX-Request")
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderXFrameOptions, "DENY")
	c.Set(fiber.HeaderReferrerPolicy, "same-origin")
	c.Set(fiber.HeaderContentSecurityPolicy, contentSecurityPolicy)
	if upload {
		err = checkUploadCSRF(c, s)
	} else if err = checkUTF8(c); err == nil {
		err = checkCSRF(c, s)
	}
	if err == nil {
		err = c.Next()
	}
	if serr := s.save(c); serr != nil && err == nil {
		err = serr
	}
	return err
}
