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
	"herald/views/account"
	"herald/views/dashboard"
	"herald/views/exports"
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
	// Relays reports the relays when HERALD_SMTP_URL names several (or
	// one with relay parameters), for the Relays page; nil otherwise.
	Relays RelayReporter
	// Mail is how mail leaves: the relays' URLs without passwords, ""
	// for the outbox.
	Mail string
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

	// The route table (routes.go): the action each console route declares,
	// and the routes open to anyone, by "METHOD /path".
	actions map[string]service.Action
	open    map[string]bool
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
	w := &Web{svc: svc, opt: opt, store: store, hooks: hk, actions: map[string]service.Action{}, open: map[string]bool{}}
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
	w.mountArchive(app)      // likewise: public, no session (archive.go)
	w.mountBrand(app)        // likewise: the profile's logo and colour (brand.go)
	w.mountForms(app)        // likewise: posted from other sites (public_form.go)
	w.markOpen(app)
	app.Use(w.console)

	r := router{w: w, app: app}
	r.open(fiber.MethodGet, "/", w.root)
	w.mountPublic(r)
	r.open(fiber.MethodGet, "/login", w.loginPage)
	r.open(fiber.MethodPost, "/login", w.authLimit, w.login)
	r.open(fiber.MethodGet, "/login/code", w.loginCodePage)
	r.open(fiber.MethodPost, "/login/code", w.authLimit, w.loginCode)
	r.open(fiber.MethodGet, "/login/forgot", w.forgotPage)
	r.open(fiber.MethodPost, "/login/forgot", w.authLimit, w.forgot)
	r.open(fiber.MethodGet, "/reset/:token", w.resetPage)
	r.open(fiber.MethodPost, "/reset/:token", w.authLimit, w.reset)
	r.open(fiber.MethodGet, "/signup", w.signupGate, w.signupPage)
	r.open(fiber.MethodPost, "/signup", w.signupGate, w.authLimit, w.signup)
	r.open(fiber.MethodGet, "/signup/confirm/:token", w.signupGate, w.confirmSignupPage)
	r.open(fiber.MethodPost, "/signup/confirm/:token", w.signupGate, w.authLimit, w.confirmSignup)
	r.open(fiber.MethodGet, "/invitations/:token", w.invitationPage)
	r.open(fiber.MethodPost, "/invitations/:token", w.authLimit, w.acceptInvitation)
	r.open(fiber.MethodPost, "/logout", w.logout)

	r.get("/dashboard", service.ActRead, w.dashboard)
	r.post(dashboard.WelcomeKeysURL, service.ActKeys, w.welcomeKeysSaved)

	r.get("/account", service.ActRead, w.account)
	r.get("/docs/api", service.ActRead, w.apiDocs)
	r.get("/help/people-and-machines", service.ActRead, w.humanHelp)
	r.get("/account/keys", service.ActKeys, w.showKeys)
	r.post("/account/keys", service.ActKeys, w.rotateKeys)
	r.post("/account/time-zone", service.ActSettings, w.saveTimeZone)
	r.post("/account/checklist", service.ActSettings, w.saveChecklistSetting)
	r.post(account.ProfileURL, service.ActSettings, w.saveProfile)
	r.post("/account/password", service.ActOwnLogin, w.changePassword)
	r.post("/account/logout-everywhere", service.ActOwnLogin, w.logoutEverywhere)
	r.post("/account/api-keys", service.ActKeys, w.createAPIKey)
	r.post("/account/api-keys/:id/revoke", service.ActKeys, w.revokeAPIKey)
	r.get("/account/2fa", service.ActOwnLogin, w.twoFactorPage)
	r.post("/account/2fa/setup", service.ActOwnLogin, w.twoFactorSetup)
	r.post("/account/2fa/enable", service.ActOwnLogin, w.twoFactorEnable)
	r.post("/account/2fa/off", service.ActOwnLogin, w.twoFactorOff)
	r.post("/account/2fa/recovery-codes", service.ActOwnLogin, w.recoveryCodes)

	r.get("/suppressions", service.ActRead, func(c *fiber.Ctx) error { return c.Redirect("/suppressions/global", fiber.StatusSeeOther) })
	r.get("/suppressions/global", service.ActRead, w.listGlobal)
	r.post("/suppressions/global", service.ActSuppressions, w.addGlobal)
	r.post("/suppressions/global/bulk-delete", service.ActSuppressions, w.bulkDeleteGlobal)
	r.post("/suppressions/global/:id/delete", service.ActSuppressions, w.deleteGlobal)

	r.get("/suppressions/groups", service.ActRead, w.listGroups)
	r.post("/suppressions/groups", service.ActSuppressions, w.createGroup)
	r.get("/suppressions/groups/:id", service.ActRead, w.listGroupRecipients)
	r.post("/suppressions/groups/:id", service.ActSuppressions, w.updateGroup)
	r.get("/suppressions/groups/:id/edit", service.ActRead, w.editGroup)
	r.get("/suppressions/groups/:id/row", service.ActRead, w.groupRow)
	r.post("/suppressions/groups/:id/recipients", service.ActSuppressions, w.addGroupRecipients)
	r.post("/suppressions/groups/:id/recipients/bulk-delete", service.ActSuppressions, w.bulkDeleteGroupRecipients)
	r.post("/suppressions/groups/:id/recipients/:rid/delete", service.ActSuppressions, w.deleteGroupRecipient)

	r.get("/suppressions/bounced", service.ActRead, w.listBounced)
	r.get("/suppressions/reports", service.ActRead, w.listReports)
	r.get("/suppressions/lifted", service.ActRead, w.listLifted)
	r.get("/suppressions/setup", service.ActRead, w.bounceSetup)
	r.post("/suppressions/bounced/lift", service.ActSuppressions, w.bulkLiftBounced)
	r.post("/suppressions/bounced/:id/lift", service.ActSuppressions, w.liftBounced)

	// Audience. Fixed paths come before the /:id ones they would match.
	r.get("/contacts", service.ActRead, w.listContacts)
	r.post("/contacts", service.ActPrepare, w.createContact)
	r.get("/contacts/new", service.ActRead, w.newContact)
	r.post("/contacts/bulk-delete", service.ActPrepare, w.bulkDeleteContacts)
	r.get("/contacts/states", service.ActRead, w.states)
	r.get("/contacts/cities", service.ActRead, w.cities)

	r.get("/contacts/types", service.ActRead, w.listTypes)
	r.post("/contacts/types", service.ActPrepare, w.createType)
	r.post("/contacts/types/:id", service.ActPrepare, w.updateType)
	r.get("/contacts/types/:id/edit", service.ActRead, w.editType)
	r.get("/contacts/types/:id/row", service.ActRead, w.typeRow)
	r.post("/contacts/types/:id/delete", service.ActDeleteList, w.deleteType)

	r.get("/contacts/fields", service.ActRead, w.listFields)
	r.post("/contacts/fields", service.ActPrepare, w.createField)
	r.post("/contacts/fields/:id/delete", service.ActPrepare, w.deleteField)

	r.get("/contacts/export.csv", service.ActRead, w.exportContacts)
	// Background exports: started with the export routes' own action
	// (reading), listed and downloaded from any process.
	r.get(exports.URL, service.ActRead, w.listExports)
	r.post(exports.ContactsURL, service.ActRead, w.startContactsExport)
	r.get("/exports/:id/download", service.ActRead, w.downloadExport)
	r.get("/contacts/import", service.ActRead, w.showImport)
	r.post(UploadPath, service.ActImport, w.uploadImport)
	r.get("/contacts/import/sample.csv", service.ActRead, w.sampleCSV)
	r.get("/contacts/import/:id", service.ActRead, w.importReport)
	r.get("/contacts/import/:id/progress", service.ActRead, w.importProgress)

	w.tagRoutes(r)     // web/tags.go
	w.privacyRoutes(r) // web/privacy.go
	r.post("/contacts/:id", service.ActPrepare, w.updateContact)
	r.get("/contacts/:id/edit", service.ActRead, w.editContact)
	r.get("/contacts/:id/history", service.ActRead, w.contactHistory)
	r.post("/contacts/:id/delete", service.ActPrepare, w.deleteContact)

	r.get("/segments", service.ActRead, w.listSegments)
	r.post("/segments", service.ActPrepare, w.createSegment)
	r.get("/segments/new", service.ActRead, w.newSegment)
	r.post("/segments/count", service.ActRead, w.countSegment)
	r.post("/segments/conditions", service.ActRead, w.editConditions)
	r.get("/segments/:id", service.ActRead, w.listSegmentRecipients)
	r.post("/segments/:id", service.ActPrepare, w.updateSegment)
	r.get("/segments/:id/edit", service.ActRead, w.editSegment)
	r.get("/segments/:id/why", service.ActRead, w.whySegment)
	r.post("/segments/:id/delete", service.ActDeleteList, w.deleteSegment)
	r.post("/segments/:id/recipients", service.ActPrepare, w.addSegmentRecipient)
	r.post("/segments/:id/recipients/:rid/delete", service.ActPrepare, w.deleteSegmentRecipient)

	r.get("/senders", service.ActRead, w.listSenders)
	r.post("/senders", service.ActSenders, w.createSender)
	r.get("/senders/new", service.ActRead, w.newSender)
	r.get("/senders/states", service.ActRead, w.senderStates)
	r.get("/senders/cities", service.ActRead, w.senderCities)
	r.get("/senders/warmup", service.ActRead, w.showWarmup) // before /senders/:id
	r.post("/senders/warmup", service.ActSenders, w.startWarmup)
	r.post("/senders/warmup/end", service.ActSenders, w.endWarmup)
	r.get("/senders/:id", service.ActRead, w.showSender)
	r.post("/senders/:id", service.ActSenders, w.updateSender)
	r.get("/senders/:id/edit", service.ActRead, w.editSender)
	r.post("/senders/:id/resend", service.ActSenders, w.resendSender)
	r.post("/senders/:id/delete", service.ActSenders, w.deleteSender)
	r.post("/senders/:id/check", service.ActSenders, w.checkSender)
	r.post("/senders/:id/sign-anyway", service.ActSenders, w.signAnywaySender)
	r.post("/senders/:id/sending-ips", service.ActSenders, w.sendingIPsSender)
	r.post("/senders/:id/rotate-key", service.ActSenders, w.rotateSender)

	r.get("/messages", service.ActRead, w.listMessages)
	r.get("/outbox", service.ActRead, w.listOutbox)
	r.get("/relays", service.ActPrepare, w.relaysPage)
	r.get("/outbox/:id", service.ActRead, w.showOutboxMessage)
	r.get("/outbox/:id/raw", service.ActRead, w.rawOutboxMessage)

	r.get("/templates", service.ActRead, w.gallery)
	r.get("/templates/editor", service.ActRead, w.newDesign)
	r.get("/templates/library/:id/preview", service.ActRead, w.previewLibrary)
	r.post("/templates/designs", service.ActPrepare, w.createDesign)
	r.post("/templates/designs/:id", service.ActPrepare, w.updateDesign)
	r.get("/templates/designs/:id/edit", service.ActRead, w.editDesign)
	r.get("/templates/designs/:id/preview", service.ActRead, w.previewDesign)
	r.post("/templates/designs/:id/delete", service.ActPrepare, w.deleteDesign)
	r.post("/templates/blocks", service.ActPrepare, w.saveBlock)
	r.get("/templates/blocks/:id", service.ActRead, w.showBlock)
	r.post("/templates/blocks/:id/delete", service.ActPrepare, w.deleteBlock)

	// Single sends. Fixed paths come before the /:utr ones they would match.
	r.get("/single-sends", service.ActRead, w.listSends)
	r.post("/single-sends", service.ActSend, w.createSend)
	r.get("/single-sends/new", service.ActRead, w.newSend)
	r.post("/single-sends/bulk-delete", service.ActSend, w.bulkDeleteSends)
	r.post("/single-sends/count", service.ActRead, w.countSendAudience)
	r.post("/single-sends/checklist", service.ActRead, w.checkSend)
	r.post("/single-sends/validate", service.ActRead, w.validateSend)
	r.get("/single-sends/:utr/recipients.csv", service.ActRead, w.exportSendRecipients)
	r.post("/single-sends/:utr/recipients-export", service.ActRead, w.startRecipientsExport)
	r.get("/single-sends/:utr/statistics.csv", service.ActRead, w.exportSendStatistics)
	r.post("/single-sends/group", service.ActSuppressions, w.createSendGroup)
	r.post("/single-sends/test", service.ActPrepare, w.testSend)
	r.post("/single-sends/draft", service.ActPrepare, w.saveDraft) // a draft is never armed: an editor's work
	r.get("/single-sends/calendar", service.ActRead, w.sendsCalendar)
	r.get("/single-sends/preview", service.ActRead, w.previewSendDesign)
	r.get("/single-sends/compare", service.ActRead, w.compareSends)
	r.get("/single-sends/:utr", service.ActRead, w.showSend)
	r.post("/single-sends/:utr", service.ActSend, w.updateSend)
	r.get("/single-sends/:utr/edit", service.ActRead, w.editSend)
	r.get("/single-sends/:utr/progress", service.ActRead, w.sendProgress)
	r.get("/single-sends/:utr/click-map", service.ActRead, w.sendClickMap)
	r.post("/single-sends/:utr/duplicate", service.ActPrepare, w.duplicateSend)
	r.post("/single-sends/:utr/delete", service.ActSend, w.deleteSend)
	r.post("/single-sends/:utr/resume", service.ActSend, w.resumeSend)
	r.post("/single-sends/:utr/ab/decide", service.ActSend, w.decideABNow)
	r.get("/single-sends/:utr/resend", service.ActRead, w.showResend)
	r.post("/single-sends/:utr/resend", service.ActSend, w.scheduleResend)

	r.get("/notifications", service.ActRead, w.listNotifications)
	r.post("/notifications", service.ActSettings, w.addNotification)
	r.post("/notifications/bulk-delete", service.ActSettings, w.bulkDeleteNotifications)
	r.post("/notifications/:id/delete", service.ActSettings, w.deleteNotification)

	w.mountAutomations(r)
	w.mountEventWebhooks(r)
	w.mountTeam(r)
	w.mountFormPages(r)
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
