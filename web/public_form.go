package web

import (
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/public"
)

// mountForms registers the public sign-up forms and their confirmation
// links. They come before the console's middleware: the embeddable
// snippet posts from other sites (cross-origin by design) and a person
// opening a confirmation link has no session, so neither carries the
// console's CSRF token; the form's public id and the link's token are all
// they need. Every other route keeps the console's CSRF check.
func (w *Web) mountForms(app *fiber.App) {
	// A fault answers the public error page in the visitor's language.
	app.Get("/f/:id", recipientErrors(w.formPage))
	app.Post("/f/:id", recipientErrors(w.formPost))
	app.Get("/c/:token", recipientErrors(w.confirmLink)) // GET and HEAD
	app.Post("/c/:token", recipientErrors(w.confirmPost))
}

// formHeaders are the headers of the hosted form: the console's policy,
// with the form's redirect address allowed as the target of its post.
func formHeaders(c *fiber.Ctx, f *models.Form) {
	recipientHeaders(c)
	if f != nil && f.RedirectURL != "" {
		if u, err := url.Parse(f.RedirectURL); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			c.Set(fiber.HeaderContentSecurityPolicy, strings.Replace(contentSecurityPolicy,
				"form-action 'self'", "form-action 'self' "+u.Scheme+"://"+u.Host, 1))
		}
	}
}

// hostedForm is the hosted page of f, with what a post left, in the
// visitor's language: the form's, else the browser's, else English (the
// person is not known yet; decisions.md 10).
func (w *Web) hostedForm(c *fiber.Ctx, f *models.Form) (public.SignupPage, error) {
	formLang := ""
	if f != nil {
		formLang = f.Language
	}
	l := recipientLocale(c, "", formLang)
	p := public.SignupPage{T: l}
	if f == nil {
		return p, nil
	}
	ctx := c.UserContext()
	fields, err := w.svc.Forms.FormFields(ctx, f)
	if err != nil {
		return p, err
	}
	groups, err := w.svc.Forms.FormGroups(ctx, f)
	if err != nil {
		return p, err
	}
	stamp, err := w.svc.Forms.Stamp(ctx, f.PublicID)
	if err != nil {
		return p, err
	}
	brand, err := w.svc.Profiles.Brand(ctx, f.UserID)
	if err != nil {
		return p, err
	}
	p.Action, p.Form, p.Fields, p.Groups, p.Stamp, p.Brand = "/f/"+f.PublicID, f, fields, groups, stamp, brand
	p.Consent = service.ConsentText(l, f)
	return p, nil
}

// formPage serves the hosted sign-up page.
func (w *Web) formPage(c *fiber.Ctx) error {
	f, err := w.svc.Forms.Public(c.UserContext(), strings.Clone(c.Params("id")))
	if err != nil && !service.IsNotFound(err) {
		return err
	}
	formHeaders(c, f)
	p, err := w.hostedForm(c, f)
	if err != nil {
		return err
	}
	if f == nil {
		return render(c, fiber.StatusNotFound, public.FormPage(p))
	}
	return render(c, fiber.StatusOK, public.FormPage(p))
}

// signupInput reads a post of the form: the reserved names, and every
// other field as a custom value (the service keeps the form's own).
func (w *Web) signupInput(c *fiber.Ctx) service.SignupInput {
	in := service.SignupInput{Custom: map[string]string{}, IP: w.clientIP(c), UserAgent: string(c.Request().Header.UserAgent()),
		AcceptLanguage: strings.Clone(c.Get(fiber.HeaderAcceptLanguage))}
	c.Request().PostArgs().VisitAll(func(k, v []byte) {
		val := string(v)
		switch key := string(k); key {
		case "email":
			in.Email = val
		case "first_name":
			in.FirstName = val
		case "last_name":
			in.LastName = val
		case "website":
			in.Website = val
		case "ts":
			in.Stamp = val
		case "groups[]", "groups":
			if len(in.Groups) < service.MaxFormGroups {
				in.Groups = append(in.Groups, val)
			}
		default:
			if len(in.Custom) < service.MaxFormFields {
				in.Custom[key] = val
			}
		}
	})
	if form, err := c.MultipartForm(); err == nil && form != nil {
		for k, vs := range form.Value {
			for _, v := range vs {
				switch k {
				case "email":
					in.Email = v
				case "first_name":
					in.FirstName = v
				case "last_name":
					in.LastName = v
				case "website":
					in.Website = v
				case "ts":
					in.Stamp = v
				case "groups[]", "groups":
					in.Groups = append(in.Groups, v)
				default:
					in.Custom[k] = v
				}
			}
		}
	}
	return in
}

// formPost takes a sign-up from the hosted page or the snippet. It
// answers the page (or the form's redirect), or with Accept:
// application/json the envelope; the same whether the address was known.
func (w *Web) formPost(c *fiber.Ctx) error {
	id := strings.Clone(c.Params("id"))
	js := wantsJSON(c)
	if js {
		// No cookies are read or set here: any site may read the answer.
		c.Set(fiber.HeaderAccessControlAllowOrigin, "*")
	}
	var res *service.SignupResult
	in := w.signupInput(c)
	err := checkUTF8(c)
	if err == nil {
		res, err = w.svc.Forms.Submit(c.UserContext(), id, in)
	}
	if js {
		return formJSON(c, res, err)
	}
	var f *models.Form
	if res != nil {
		f = res.Form
	} else if err != nil {
		var ferr error
		if f, ferr = w.svc.Forms.Public(c.UserContext(), id); ferr != nil && !service.IsNotFound(ferr) {
			return ferr
		}
	}
	formHeaders(c, f)
	if err == nil {
		if to, ok := service.SafeRedirect(f.RedirectURL); ok && f.RedirectURL != "" {
			return c.Redirect(to, fiber.StatusSeeOther)
		}
		p, perr := w.hostedForm(c, f)
		if perr != nil {
			return perr
		}
		p.Done = p.T.T("form.subscribed")
		if res.Message == service.MsgCheckInbox {
			p.Done = p.T.T("form.check_inbox")
		}
		return render(c, fiber.StatusOK, public.FormPage(p))
	}
	p, perr := w.hostedForm(c, f)
	if perr != nil {
		return perr
	}
	if f == nil {
		return render(c, fiber.StatusNotFound, public.FormPage(p))
	}
	p.Values = map[string]string{"email": in.Email, "first_name": in.FirstName, "last_name": in.LastName}
	for k, v := range in.Custom {
		p.Values[k] = v
	}
	p.Chosen = map[int64]bool{}
	for _, g := range in.Groups {
		if id, perr := service.ParseID(g); perr == nil {
			p.Chosen[id] = true
		}
	}
	var se *service.Error
	if !errors.As(err, &se) {
		return err
	}
	status := fiber.StatusUnprocessableEntity
	switch se.Code {
	case service.CodeRateLimited:
		status, p.Message = fiber.StatusTooManyRequests, p.T.T("form.too_many")
		retryAfter(c, err)
	case service.CodeValidation:
		if len(se.Fields) > 0 {
			p.Errors = signupErrors(p.T, se)
		} else if errors.Is(err, service.ErrSignupTooFast) {
			p.Message = p.T.T("form.too_fast")
		} else {
			p.Message = p.T.T("form.fix_below")
		}
	case service.CodeUnavailable:
		status, p.Message = fiber.StatusServiceUnavailable, p.T.T("form.unavailable")
	default:
		return err
	}
	for k := range p.Values {
		p.Values[k] = strings.ToValidUTF8(p.Values[k], "")
	}
	return render(c, status, public.FormPage(p))
}

// signupErrors are the field problems of a sign-up in the visitor's
// language, by the rule each broke (the service's messages are the API's
// English).
func signupErrors(t views.Translator, se *service.Error) map[string][]string {
	out := make(map[string][]string, len(se.Fields))
	for field, problems := range se.Problems() {
		for _, pr := range problems {
			id := "form.error.invalid"
			switch pr.Reason {
			case service.ReasonRequired:
				id = "form.error.required"
			case service.ReasonEmail:
				id = "form.error.email"
			case service.ReasonMax:
				id = "form.error.too_long"
			}
			if msg := t.T(id); !slices.Contains(out[field], msg) {
				out[field] = append(out[field], msg)
			}
		}
	}
	return out
}

// formJSON answers a sign-up with the API's envelope.
func formJSON(c *fiber.Ctx, res *service.SignupResult, err error) error {
	if err == nil {
		return c.JSON(fiber.Map{"status": "success", "message": res.Message})
	}
	var se *service.Error
	if !errors.As(err, &se) {
		slog.ErrorContext(c.UserContext(), "web: form sign-up", "err", err)
		return c.Status(fiber.StatusInternalServerError).JSON(fiber.Map{"status": "failed", "errors": "Internal Server Error"})
	}
	status := fiber.StatusUnprocessableEntity
	var errs any = se.Message
	switch se.Code {
	case service.CodeNotFound:
		status, errs = fiber.StatusNotFound, "Record Not Found"
	case service.CodeRateLimited:
		status = fiber.StatusTooManyRequests
		retryAfter(c, err)
	case service.CodeUnavailable:
		status = fiber.StatusServiceUnavailable
	case service.CodeValidation:
		if len(se.Fields) > 0 {
			errs = se.Fields
		}
	}
	return c.Status(status).JSON(fiber.Map{"status": "failed", "errors": errs})
}

// confirmLink answers a GET (or HEAD) of a confirmation link: a person's
// click confirms; a machine's (HEAD, a link scanner, a gateway's
// prefetch, as herald's machine rules judge clicks) gets the page with
// the Confirm button and confirms nothing.
func (w *Web) confirmLink(c *fiber.Ctx) error {
	return w.confirm(c, false)
}

// confirmPost confirms, whoever posts: the page's button, or a client.
func (w *Web) confirmPost(c *fiber.Ctx) error {
	return w.confirm(c, true)
}

func (w *Web) confirm(c *fiber.Ctx, post bool) error {
	recipientHeaders(c)
	tok := strings.Clone(c.Params("token"))
	p := public.ConfirmPage{Action: "/c/" + url.PathEscape(tok), State: "unknown"}
	h := w.trackHit(c)
	res, err := w.svc.Forms.Confirm(c.UserContext(), tok, post, delivery.Hit{Method: h.Method, UserAgent: h.UserAgent, IP: h.IP})
	if err != nil {
		if !service.IsNotFound(err) {
			return err
		}
		p.T = recipientLocale(c, "", "")
		return render(c, fiber.StatusNotFound, public.ConfirmationPage(p))
	}
	// The language the mail spoke (picked at the sign-up from the
	// contact's, the form's and the browser's), else the form's.
	p.T, p.FormName = recipientLocale(c, res.Language, res.Form.Language), res.Form.Name
	if p.Brand, err = w.svc.Profiles.Brand(c.UserContext(), res.Form.UserID); err != nil {
		return err
	}
	switch res.State {
	case service.ConfirmAsk:
		p.State = "ask"
	case service.Confirmed:
		p.State = "done"
	case service.ConfirmExpired:
		p.State = "expired"
		return render(c, fiber.StatusGone, public.ConfirmationPage(p))
	}
	return render(c, fiber.StatusOK, public.ConfirmationPage(p))
}
