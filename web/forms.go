package web

import (
	"strconv"
	"strings"

	"github.com/a-h/templ"
	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/forms"
	"herald/views/public"
)

// The console's sign-up form pages: the list with the add form, and one
// form with its settings, a live preview (htmx), its public address and
// the snippet to embed.

func (w *Web) mountFormPages(r router) {
	r.get(forms.URL, service.ActRead, w.listForms)
	r.post(forms.URL, service.ActPrepare, w.createForm)
	r.get(forms.URL+"/:id", service.ActRead, w.showForm)
	r.post(forms.URL+"/:id", service.ActPrepare, w.updateForm)
	r.post(forms.URL+"/:id/preview", service.ActRead, w.previewForm)
	r.post(forms.URL+"/:id/delete", service.ActPrepare, w.deleteForm)
}

// formSettings reads the settings form.
func formSettings(c *fiber.Ctx) (forms.Form, service.FormInput) {
	var fields, groups []string
	c.Context().PostArgs().VisitAll(func(k, v []byte) {
		switch string(k) {
		case "fields":
			fields = append(fields, strings.Clone(string(v)))
		case "group_ids":
			groups = append(groups, strings.Clone(string(v)))
		}
	})
	double := formValue(c, "double_opt_in") != ""
	f := forms.Form{Name: formValue(c, "name"), ContactTypeID: formValue(c, "contact_type_id"), DoubleOptIn: double, Fields: fields,
		GroupIDs: groups, RedirectURL: formValue(c, "redirect_url"), Language: formValue(c, "language"),
		ConfirmSubject: formValue(c, "confirm_subject"), ConfirmBody: formValue(c, "confirm_body"), CSRF: csrf(c)}
	in := service.FormInput{Name: f.Name, ContactTypeID: f.ContactTypeID, DoubleOptIn: "0", Fields: fields, GroupIDs: groups,
		RedirectURL: f.RedirectURL, Language: f.Language, ConfirmSubject: f.ConfirmSubject, ConfirmBody: f.ConfirmBody}
	if double {
		in.DoubleOptIn = "1"
	}
	return f, in
}

// settingsOf is the settings form of a stored form.
func settingsOf(c *fiber.Ctx, fm *models.Form) forms.Form {
	f := forms.Form{ID: fm.ID, Name: fm.Name, ContactTypeID: strconv.FormatInt(fm.ContactTypeID, 10), DoubleOptIn: fm.DoubleOptIn == 1,
		Fields: fm.Fields, RedirectURL: fm.RedirectURL, Language: fm.Language, ConfirmSubject: fm.ConfirmSubject, ConfirmBody: fm.ConfirmBody, CSRF: csrf(c)}
	for _, g := range fm.GroupIDs {
		f.GroupIDs = append(f.GroupIDs, strconv.FormatInt(g, 10))
	}
	return f
}

// formChoices are the account's contact types, custom fields and groups.
func (w *Web) formChoices(c *fiber.Ctx) (forms.Choices, error) {
	ctx, acct := c.UserContext(), accountID(c)
	var ch forms.Choices
	var err error
	if ch.Types, err = w.svc.ContactTypes.All(ctx, acct); err != nil {
		return ch, err
	}
	if ch.Fields, err = w.svc.Fields.Custom(ctx, acct); err != nil {
		return ch, err
	}
	err = w.svc.Groups.Each(ctx, acct, service.ListFilter{}, func(g *models.UnsubscribeGroupCount) error {
		ch.Groups = append(ch.Groups, g.UnsubscribeGroup)
		return nil
	})
	return ch, err
}

func (w *Web) formsPage(c *fiber.Ctx, status int, f forms.Form) error {
	ch, err := w.formChoices(c)
	if err != nil {
		return err
	}
	d := forms.Data{Form: f, Choices: ch, Types: map[int64]string{}, CanEdit: can(c, service.ActPrepare)}
	for _, t := range ch.Types {
		d.Types[t.ID] = t.Name
	}
	err = w.svc.Forms.Each(c.UserContext(), accountID(c), service.ListFilter{}, func(fm *models.Form) error {
		d.Rows = append(d.Rows, *fm)
		return nil
	})
	if err != nil {
		return err
	}
	return page(c, status, "Sign-up forms", views.NavForms, forms.Page(d))
}

func (w *Web) listForms(c *fiber.Ctx) error {
	return w.formsPage(c, fiber.StatusOK, forms.Form{DoubleOptIn: true, CSRF: csrf(c)})
}

func (w *Web) createForm(c *fiber.Ctx) error {
	f, in := formSettings(c)
	fm, err := w.svc.Forms.Save(c.UserContext(), accountID(c), in)
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		return w.formsPage(c, fiber.StatusUnprocessableEntity, f)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Form added. Share its page or embed it on your site.")
	return c.Redirect(forms.DetailURL(fm.ID), fiber.StatusSeeOther)
}

// formPreview is the live preview of fm as people will see it.
func (w *Web) formPreview(c *fiber.Ctx, fm *models.Form) (public.SignupPage, []models.Field, []models.UnsubscribeGroup, error) {
	ctx := c.UserContext()
	fields, err := w.svc.Forms.FormFields(ctx, fm)
	if err != nil {
		return public.SignupPage{}, nil, nil, err
	}
	groups, err := w.svc.Forms.FormGroups(ctx, fm)
	if err != nil {
		return public.SignupPage{}, nil, nil, err
	}
	// As people see it: in the form's language (English when it has none
	// and their browser names none either).
	l := service.FormPageLocale(fm, "")
	return public.SignupPage{T: l, Form: fm, Fields: fields, Groups: groups, Consent: service.ConsentText(l, fm), Preview: true},
		fields, groups, nil
}

func (w *Web) formDetail(c *fiber.Ctx, status int, id int64, edit *forms.Form) error {
	fm, err := w.svc.Forms.Get(c.UserContext(), accountID(c), id)
	if err != nil {
		return err
	}
	ch, err := w.formChoices(c)
	if err != nil {
		return err
	}
	p, fields, groups, err := w.formPreview(c, fm)
	if err != nil {
		return err
	}
	url := w.svc.Forms.PublicURL(fm)
	subject, body, err := w.svc.Forms.ConfirmationPreview(c.UserContext(), fm)
	if err != nil {
		return err
	}
	d := forms.Detail{Form: *fm, Edit: settingsOf(c, fm), Choices: ch, PublicURL: url, Preview: p,
		Snippet: forms.Snippet(p.T, url, *fm, fields, groups, p.Consent), Mail: forms.MailPreview{Subject: subject, HTML: body},
		CanEdit: can(c, service.ActPrepare)}
	if edit != nil {
		d.Edit = *edit
		d.Edit.ID = fm.ID
	}
	return page(c, status, fm.Name, views.NavForms, forms.DetailPage(d))
}

func (w *Web) showForm(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	return w.formDetail(c, fiber.StatusOK, id, nil)
}

func (w *Web) updateForm(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	f, in := formSettings(c)
	in.ID = c.Params("id")
	if _, err := w.svc.Forms.Update(c.UserContext(), accountID(c), in); isValidation(err) {
		f.Errors = fieldErrors(err)
		return w.formDetail(c, fiber.StatusUnprocessableEntity, id, &f)
	} else if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Form saved.")
	return c.Redirect(forms.DetailURL(id), fiber.StatusSeeOther)
}

// previewForm answers the live preview of the settings as typed (not
// saved): a field or group the account does not have is left out.
func (w *Web) previewForm(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	fm, err := w.svc.Forms.Get(c.UserContext(), accountID(c), id)
	if err != nil {
		return err
	}
	f, _ := formSettings(c)
	draft := *fm
	if name := strings.TrimSpace(f.Name); name != "" {
		draft.Name = name
	}
	draft.DoubleOptIn = 0
	if f.DoubleOptIn {
		draft.DoubleOptIn = 1
	}
	draft.Language, draft.ConfirmSubject, draft.ConfirmBody = strings.TrimSpace(f.Language), f.ConfirmSubject, f.ConfirmBody
	draft.Fields, draft.GroupIDs = f.Fields, nil
	for _, g := range f.GroupIDs {
		if gid, err := service.ParseID(g); err == nil {
			draft.GroupIDs = append(draft.GroupIDs, gid)
		}
	}
	p, _, _, err := w.formPreview(c, &draft)
	if err != nil {
		return err
	}
	subject, body, err := w.svc.Forms.ConfirmationPreview(c.UserContext(), &draft)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, templ.Join(forms.Preview(p), forms.MailBox(forms.MailPreview{Subject: subject, HTML: body}, true)))
}

func (w *Web) deleteForm(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err == nil {
		err = w.svc.Forms.Delete(c.UserContext(), accountID(c), id)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Form deleted.")
	return c.Redirect(forms.URL, fiber.StatusSeeOther)
}
