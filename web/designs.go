package web

import (
	"context"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/designs"
)

// previewCSP is the console's policy on pages that show a mail in a
// sandboxed srcdoc frame. Such a frame inherits the page's policy, and
// mail HTML is styled inline: inline styles are allowed, nothing else
// more (no script anywhere, no remote image: opening a mail in the console
// fetches nothing and counts no open).
const previewCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"

// editorCSP is the policy of the editor page: GrapesJS writes style
// elements and style attributes into the page and its canvas frame (an
// about:blank frame, which inherits the policy). Scripts stay this site's
// own files only.
const editorCSP = previewCSP

// publicPreviewCSP is the policy of the public preview of a library
// design, served as the mail's HTML itself: a sandbox (no script, an
// opaque origin), nothing fetched but inline styles and data: images.
const publicPreviewCSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'"

// designsPage reads the page q of the account's own designs.
func (w *Web) designsPage(c *fiber.Ctx, q views.ListQuery) (designs.List, error) {
	acct := accountID(c)
	rows, pager, err := readPage(c.UserContext(), q, designs.GalleryURL, func(ctx context.Context, f service.ListFilter, fn func(*models.Design) error) error {
		return w.svc.Designs.Each(ctx, acct, f, fn)
	})
	return designs.List{Rows: rows, Query: pager.Query, Pager: pager, CSRF: csrf(c)}, err
}

// gallery is the templates page: the library and the account's designs
// (only the latter to htmx, after a search or a page change).
func (w *Web) gallery(c *fiber.Ctx) error {
	own, err := w.designsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, designs.ListView(own))
	}
	lib, err := w.svc.Templates.Library()
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Templates", views.NavTemplates, designs.GalleryPage(designs.Gallery{Library: lib, Own: own}))
}

// libraryParam reads the route's library design. Errors: ErrNotFound.
func (w *Web) libraryParam(c *fiber.Ctx) (*models.DesignTemplate, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Templates.Design(id)
}

// designParam reads the route's design of the account. Errors: ErrNotFound.
func (w *Web) designParam(c *fiber.Ctx) (*models.Design, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Designs.Get(c.UserContext(), accountID(c), id)
}

// publicPreview is the public page of a library design rendered with
// the sample values: the mail's HTML itself under publicPreviewCSP, so it
// looks as a recipient sees it and can run nothing.
func (w *Web) publicPreview(c *fiber.Ctx) error {
	d, err := w.libraryParam(c)
	if err != nil {
		return err
	}
	out, err := w.svc.Designs.Preview(c.UserContext(), 0, d.HTMLCode, 0)
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, publicPreviewCSP)
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	return c.SendString(out)
}

func (w *Web) previewLibrary(c *fiber.Ctx) error {
	d, err := w.libraryParam(c)
	if err != nil {
		return err
	}
	return w.preview(c, designs.Preview{Title: "Preview: " + d.TemplateName, URL: designs.LibraryPreviewURL(d.ID), EditURL: designs.NewFromURL(d.ID)}, d.HTMLCode)
}

func (w *Web) previewDesign(c *fiber.Ctx) error {
	d, err := w.designParam(c)
	if err != nil {
		return err
	}
	return w.preview(c, designs.Preview{Title: "Preview: " + d.Name, URL: designs.PreviewURL(d.ID), EditURL: designs.EditURL(d.ID)}, d.TemplateHTML)
}

// maxPreviewContacts is how many contacts the preview's select offers
// for a search.
const maxPreviewContacts = 20

// preview renders htmlCode for the contact chosen (?contact=id; none:
// sample values) and offers the contacts matching ?q. To htmx it answers
// the panel (select and frame) only.
func (w *Web) preview(c *fiber.Ctx, p designs.Preview, htmlCode string) error {
	ctx, acct := c.UserContext(), accountID(c)
	p.Search = strings.TrimSpace(formValue(c, "q"))
	contactID := parseInt(c.Query("contact"))
	found := false
	err := w.svc.Contacts.Each(ctx, acct, service.ContactFilter{ListFilter: service.ListFilter{Search: p.Search, PerPage: maxPreviewContacts}}, func(v *models.ContactView) error {
		p.Contacts = append(p.Contacts, views.Option{Value: strconv.FormatInt(v.ID, 10), Label: contactLabel(v)})
		found = found || v.ID == contactID
		if len(p.Contacts) >= maxPreviewContacts {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		return err
	}
	if contactID > 0 {
		// The chosen contact stays offered whatever the search.
		v, err := w.svc.Contacts.Get(ctx, acct, contactID)
		if err != nil {
			return err
		}
		if !found {
			p.Contacts = append([]views.Option{{Value: strconv.FormatInt(v.ID, 10), Label: contactLabel(v)}}, p.Contacts...)
		}
		p.Contact = strconv.FormatInt(contactID, 10)
	}
	if p.HTML, err = w.svc.Designs.Preview(ctx, acct, htmlCode, contactID); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentSecurityPolicy, previewCSP)
	if partial(c) {
		return render(c, fiber.StatusOK, designs.PreviewPanel(p))
	}
	return page(c, fiber.StatusOK, p.Title, views.NavTemplates, designs.PreviewPage(p))
}

func contactLabel(v *models.ContactView) string {
	name := strings.TrimSpace(v.FirstName + " " + v.LastName)
	if name == "" {
		return v.Email
	}
	return name + " <" + v.Email + ">"
}

// editorPage renders the editor under its own policy, with GrapesJS.
func (w *Web) editorPage(c *fiber.Ctx, status int, title string, e designs.Editor) error {
	e.CSRF = csrf(c)
	var err error
	if e.Tools, err = w.editorTools(c); err != nil {
		return err
	}
	return renderPage(c, status, editorLayout(c, title, views.NavTemplates), designs.EditorPage(e))
}

// editorLayout is the page around the GrapesJS editor (a library design's
// or an automation email's): its own content policy, GrapesJS's files and
// herald's editor script.
func editorLayout(c *fiber.Ctx, title, nav string) views.Page {
	c.Set(fiber.HeaderContentSecurityPolicy, editorCSP)
	p := pageOf(c, title, nav, true)
	p.Styles = []string{"/static/vendor/grapesjs/grapes-0.23.6.min.css"}
	p.Scripts = []string{
		"/static/vendor/grapesjs/grapes-0.23.6.min.js",
		"/static/vendor/grapesjs/grapesjs-preset-newsletter-1.0.2.min.js",
		"/static/js/editor.js",
	}
	return p
}

// newDesign opens the editor on a copy of a library design (?from=id,
// the blank one by default).
func (w *Web) newDesign(c *fiber.Ctx) error {
	from := parseInt(c.Query("from"))
	if from == 0 {
		from = 1
	}
	d, err := w.svc.Templates.Design(from)
	if err != nil {
		return err
	}
	e := designs.Editor{Name: d.TemplateName, TemplateID: d.ID, TemplateJSON: d.JSONCode, TemplateHTML: d.HTMLCode}
	if d.IsBlank == 1 {
		e.Name = "Untitled design"
	}
	return w.editorPage(c, fiber.StatusOK, "New design", e)
}

func (w *Web) editDesign(c *fiber.Ctx) error {
	d, err := w.designParam(c)
	if err != nil {
		return err
	}
	e := designs.Editor{ID: d.ID, Name: d.Name, TemplateID: d.TemplateID, TemplateJSON: d.TemplateJSON, TemplateHTML: d.TemplateHTML}
	return w.editorPage(c, fiber.StatusOK, "Edit "+d.Name, e)
}

func (w *Web) createDesign(c *fiber.Ctx) error { return w.saveDesign(c, 0) }

func (w *Web) updateDesign(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	return w.saveDesign(c, id)
}

// wantsJSON reports whether the request is the editor's script, which
// asks for a JSON answer.
func wantsJSON(c *fiber.Ctx) bool {
	return strings.Contains(c.Get(fiber.HeaderAccept), fiber.MIMEApplicationJSON)
}

// saveAnswer is the JSON answer to the editor's script.
type saveAnswer struct {
	ID      int64               `json:"id,omitempty"`
	URL     string              `json:"url,omitempty"`
	Message string              `json:"message"`
	Errors  map[string][]string `json:"errors,omitempty"`
}

// saveDesign creates (id 0) or updates a design from the editor: its
// name, the editor's project JSON and the HTML (the HTML tab and a form
// without JavaScript send no JSON: the stored JSON is then emptied and
// the editor reopens the design from its HTML). The editor's script gets
// JSON (422 with the messages per field); a plain form the page again
// with its errors, or a redirect to the editor with a flash message.
func (w *Web) saveDesign(c *fiber.Ctx, id int64) error {
	in := service.DesignInput{
		Name: formValue(c, "name"), TemplateID: formValue(c, "template_id"),
		TemplateJSON: formValue(c, "template_json"), TemplateHTML: formValue(c, "template_html"),
	}
	ctx, acct := c.UserContext(), accountID(c)
	var d *models.Design
	var err error
	if id == 0 {
		d, err = w.svc.Designs.Create(ctx, acct, in)
	} else {
		d, err = w.svc.Designs.Update(ctx, acct, id, in)
	}
	if isValidation(err) {
		errs := fieldErrors(err)
		if wantsJSON(c) {
			_, msg := describe(fiber.StatusUnprocessableEntity, err)
			return c.Status(fiber.StatusUnprocessableEntity).JSON(saveAnswer{Message: msg, Errors: errs})
		}
		e := designs.Editor{ID: id, Name: in.Name, TemplateID: parseInt(in.TemplateID), TemplateJSON: in.TemplateJSON, TemplateHTML: in.TemplateHTML, Errors: errs}
		for field, msgs := range errs {
			if field != "name" && field != "template_html" {
				e.Other = append(e.Other, msgs...)
			}
		}
		return w.editorPage(c, fiber.StatusUnprocessableEntity, "Edit design", e)
	}
	if err != nil {
		if wantsJSON(c) {
			status := statusOf(err)
			_, msg := describe(status, err)
			return c.Status(status).JSON(saveAnswer{Message: msg})
		}
		return err
	}
	msg := "Design " + d.Name + " saved."
	url := designs.EditURL(d.ID)
	if wantsJSON(c) {
		if id == 0 {
			// The script goes to the new design's editor: the message
			// waits there.
			w.flash(c, views.FlashSuccess, msg)
		}
		return c.JSON(saveAnswer{ID: d.ID, URL: url, Message: msg})
	}
	w.flash(c, views.FlashSuccess, msg)
	return c.Redirect(url, fiber.StatusSeeOther)
}

// deleteDesign deletes a design: to htmx the list as it now is, to a
// browser a redirect to the templates page.
func (w *Web) deleteDesign(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Designs.Delete(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	const msg = "Design deleted."
	if !partial(c) {
		w.flash(c, views.FlashSuccess, msg)
		return c.Redirect(listBack(designs.GalleryURL, c), fiber.StatusSeeOther)
	}
	l, err := w.designsPage(c, listQuery(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, designs.ListView(l), flashOOB(views.FlashSuccess, msg))
}
