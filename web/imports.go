package web

import (
	"bytes"
	"crypto/subtle"
	"errors"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
)

// UploadPath is the one console route whose body may exceed the 10 MB
// limit of every other body: the CSV upload, read as a stream.
const UploadPath = contacts.ImportURL

// maxUploadBytes bounds an upload: HERALD_MAX_UPLOAD_MB's default (the
// setting does not reach the console yet).
const maxUploadBytes int64 = 1024 << 20

// maxUpload is the configured upload limit.
func (w *Web) maxUpload() int64 {
	if w.opt.MaxUploadBytes > 0 {
		return w.opt.MaxUploadBytes
	}
	return maxUploadBytes
}

// recentImports is how many imports the import page lists.
const recentImports = 10

var errUploadTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge, "The file is larger than the upload limit (HERALD_MAX_UPLOAD_MB).")

// The CSV upload and CSRF. A multipart body is never parsed to find the
// token: that would read the whole file into memory (or onto disk)
// before anything is checked, and for a request that may be forged. So
// the upload's token comes only from the X-CSRF-Token header (htmx sends
// it from <body hx-headers>) or from the query string of the form's
// action (a browser without JavaScript); console checks it with
// checkUploadCSRF instead of checkCSRF.

// loadUploadSession reads the session of an upload from its cookie
// alone: loadSession hands gorilla/sessions the whole request converted
// by Fiber's adaptor, which reads a streamed body into memory first.
// (Requests on this path do not renew the cookie; other pages do.)
func (w *Web) loadUploadSession(c *fiber.Ctx) *session {
	r := &http.Request{Header: http.Header{}}
	if ck := c.Get(fiber.HeaderCookie); ck != "" {
		r.Header.Set("Cookie", strings.Clone(ck))
	}
	s, err := w.store.New(r, sessionName)
	if err != nil { // a forged or expired cookie: a new session
		s, _ = w.store.New(&http.Request{Header: http.Header{}}, sessionName)
	}
	return &session{s: s, r: r}
}

// isUpload reports whether the request is on the upload's path, whose
// body (of any method: the body limit does not guard the path) is never
// read but by the upload's handler.
func isUpload(c *fiber.Ctx) bool { return c.Path() == UploadPath }

// checkUploadCSRF refuses (403) a state-changing request to the upload
// path whose token, from the header or the query string, is not the
// session's. It never reads the body.
func checkUploadCSRF(c *fiber.Ctx, s *session) error {
	want := csrfToken(c, s)
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions, fiber.MethodTrace:
		return nil
	}
	got := c.Get(csrfHeader)
	if got == "" {
		got = c.Query(csrfField)
	}
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errCSRF
	}
	return nil
}

// typeNames maps the account's contact types to their names.
func (w *Web) typeNames(c *fiber.Ctx) (map[int64]string, []models.ContactType, error) {
	types, err := w.svc.ContactTypes.All(c.UserContext(), accountID(c))
	if err != nil {
		return nil, nil, err
	}
	names := make(map[int64]string, len(types))
	for _, t := range types {
		names[t.ID] = t.Name
	}
	return names, types, nil
}

// importPage reads what the import page shows besides the form.
func (w *Web) importPage(c *fiber.Ctx, form contacts.ImportForm) (contacts.ImportPage, error) {
	names, types, err := w.typeNames(c)
	if err != nil {
		return contacts.ImportPage{}, err
	}
	form.Types, form.CSRF = types, csrf(c)
	customs, err := w.svc.Fields.Custom(c.UserContext(), accountID(c))
	if err != nil {
		return contacts.ImportPage{}, err
	}
	for _, name := range service.ReservedFieldNames {
		form.Fields = append(form.Fields, contacts.ImportField{Name: name, Label: service.FieldLabel(name), Reserved: true})
	}
	for _, f := range customs {
		form.Fields = append(form.Fields, contacts.ImportField{Name: f.FieldName, Label: f.Label})
	}
	if form.ContactTypeID == "" && len(types) == 1 {
		form.ContactTypeID = views.Itoa(types[0].ID)
	}
	d := contacts.ImportPage{Form: form}
	recent, err := w.svc.Imports.Recent(c.UserContext(), accountID(c), recentImports)
	if err != nil {
		return d, err
	}
	for _, imp := range recent {
		d.Recent = append(d.Recent, contacts.Progress{Import: imp, TypeName: names[imp.ContactTypeID]})
	}
	return d, nil
}

func (w *Web) showImport(c *fiber.Ctx) error {
	// The query only: the body of a request on this path is not read.
	d, err := w.importPage(c, contacts.ImportForm{ContactTypeID: strings.TrimSpace(strings.Clone(c.Query("type")))})
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Import contacts", views.NavContacts, contacts.ImportsPage(d))
}

// sampleCSV answers the account's sample file: the header row (reserved
// then custom fields) and an example row.
func (w *Web) sampleCSV(c *fiber.Ctx) error {
	var b bytes.Buffer
	if err := w.svc.Imports.WriteSample(c.UserContext(), accountID(c), &b); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="contacts-sample.csv"`)
	return c.Send(b.Bytes())
}

// upload is what a multipart upload brought: the form's fields and the
// file, spooled to an unlinked temporary file (gone once closed).
type upload struct {
	in      service.ImportFile
	basis   string // the chosen basis of the contacts' consent, and the words of "other"
	other   string
	file    *os.File
	size    int64
	refused error // a check already refused the upload: the rest was read past
}

// discard closes the spooled file, unless an import took it.
func (u *upload) discard() {
	if u.file != nil {
		u.file.Close()
		u.file = nil
	}
}

// errSpoolTooLarge refuses a file over service.MaxSpool that comes before
// its contact type (the console's form sends the type first).
var errSpoolTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge,
	"The file is too large to be held until its contact type arrives: send the contact type before the file.")

// maxSpool is service.MaxSpool, or less by Options.
func (w *Web) maxSpool() int64 {
	if w.opt.MaxSpoolBytes > 0 {
		return w.opt.MaxSpoolBytes
	}
	return service.MaxSpool
}

// receive reads the multipart body as it arrives, part by part: the
// contact type, and the file, copied to an unlinked temporary file
// (never held in memory). The type is checked as soon as it is known (a
// contact_type_id in the query string first). A file already known to be
// refused (a wrong type or name, or an account without any contact type)
// is read past, not kept; a type that arrives after the file and is
// refused drops the file at once. The answer comes after the body is
// read: a browser still sending would not see an earlier one.
func (w *Web) receive(c *fiber.Ctx) (*upload, error) {
	u := &upload{}
	u.in.ContactTypeID = strings.TrimSpace(strings.Clone(c.Query("contact_type_id")))
	boundary := string(c.Request().Header.MultipartFormBoundary())
	if boundary == "" {
		// Not multipart, so no file: say what is missing without reading
		// a body that may be of any size.
		return u, nil
	}
	var body io.Reader = c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	} else if conn := c.Context().Conn(); conn != nil {
		// Read at a pace, not within the server's 60 s for a request.
		body = service.PacedReader(body, conn.SetReadDeadline)
	}
	mr := multipart.NewReader(service.LimitReader(body, w.maxUpload(), errUploadTooLarge), boundary)
	ctx, acct := c.UserContext(), accountID(c)
	declared := int64(c.Request().Header.ContentLength())
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return u, nil
		}
		if err != nil {
			return u, uploadErr(err)
		}
		switch name := part.FormName(); name {
		case "contact_type_id":
			v, _ := io.ReadAll(io.LimitReader(part, 64))
			u.in.ContactTypeID = strings.TrimSpace(string(v))
			if u.file != nil && u.refused == nil {
				// The file came first: check its type now.
				if _, err := w.svc.Imports.CheckImport(ctx, acct, u.in); err != nil {
					u.refused = err
					u.discard()
				}
			}
		case "basis", "basis_other":
			v, _ := io.ReadAll(io.LimitReader(part, 1024))
			if name == "basis" {
				u.basis = string(v)
			} else {
				u.other = string(v)
			}
		default:
			if err := readColumnChoice(&u.in, name, part); err != nil {
				return u, err
			}
		case "file":
			if u.in.Present || part.FileName() == "" { // a second file, or none chosen
				break
			}
			u.in.Present, u.in.FileName = true, strings.Clone(part.FileName())
			if u.refused != nil {
				break
			}
			if u.in.ContactTypeID != "" {
				if _, err := w.svc.Imports.CheckImport(ctx, acct, u.in); err != nil {
					u.refused = err
					break
				}
			} else {
				// The type comes later, if at all: keep the file only when
				// some type could accept it, and within the spool's bound.
				ok, err := w.svc.Imports.HasTypes(ctx, acct)
				if err != nil {
					return u, err
				}
				if !ok {
					break // CheckImport refuses it once the body is read
				}
				if declared > w.maxSpool() {
					return u, errSpoolTooLarge
				}
			}
			var src io.Reader = part
			if u.in.ContactTypeID == "" {
				src = service.LimitReader(part, w.maxSpool(), errSpoolTooLarge)
			}
			if u.file, err = service.Spool(); err != nil {
				return u, err
			}
			if u.size, err = io.Copy(u.file, src); err != nil {
				if errors.Is(err, errSpoolTooLarge) {
					return u, errSpoolTooLarge
				}
				return u, uploadErr(err)
			}
		}
		// NextPart skips what is left of this part.
		part.Close()
	}
}

// uploadErr classifies a failure to read an upload: too large (413), a
// broken body (400), or a failure of ours (the temporary file: 500).
func uploadErr(err error) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, errUploadTooLarge):
		return errUploadTooLarge
	case errors.As(err, &pe):
		return err
	}
	return fiber.ErrBadRequest
}

// uploadImport receives a CSV file, starts its import in the background
// and answers at once: to htmx the emptied form, the import's progress
// panel (which then polls) and the recent imports, out of band; to a
// browser a redirect to the import's page. A refused upload answers the
// form with its errors (422).
func (w *Web) uploadImport(c *fiber.Ctx) error {
	if cl := c.Request().Header.ContentLength(); cl > 0 && int64(cl) > w.maxUpload() {
		return errUploadTooLarge
	}
	ctx, acct := c.UserContext(), accountID(c)
	if t := strings.TrimSpace(c.Query("contact_type_id")); t != "" {
		if _, err := w.svc.Imports.CheckType(ctx, acct, t); err != nil {
			return err
		}
	}
	// One of the account's upload slots, held until the import ends.
	release, err := w.svc.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		return err
	}
	defer func() {
		if release != nil {
			release()
		}
	}()
	u, err := w.receive(c)
	defer u.discard()
	if err != nil {
		return err
	}
	typeID, err := w.svc.Imports.CheckImport(ctx, acct, u.in)
	if u.refused != nil {
		err = u.refused
	} else if err == nil && u.file == nil {
		err = service.ErrNotFound // no contact type when the file came: it was not kept
	}
	// The basis the contacts' consent records, asked of the importer; its
	// message shows beside the others'.
	basis, berr := service.ImportBasis(u.basis, u.other)
	if err == nil || isValidation(err) {
		if isValidation(berr) {
			return w.refuseUpload(c, u, err, berr)
		}
		if berr != nil {
			return berr
		}
	}
	if isValidation(err) {
		return w.refuseUpload(c, u, err)
	}
	var header []string
	if err == nil {
		// The column choices of the preview (fields made for columns
		// included), once the upload is known to be taken.
		header, err = w.svc.Fields.ImportColumns(ctx, acct, u.in.Columns)
	}
	if isValidation(err) {
		return w.refuseUpload(c, u, err)
	}
	if err != nil {
		return err
	}
	if _, err := u.file.Seek(0, io.SeekStart); err != nil {
		return err
	}
	imp, err := w.svc.Imports.Start(ctx, acct, typeID, u.in.FileName, u.size)
	if err != nil {
		return err
	}
	imp.Columns = header
	// How the import's new contacts came: the basis, and (recorded, never
	// trusted) the importer's address and browser; the service adds the
	// source, the import and the time.
	imp.Consent = models.Consent{Basis: basis, IP: strings.Clone(w.clientIP(c)), UserAgent: string(c.Request().Header.UserAgent())}
	shown := *imp // Run changes imp from now on
	file, done := u.file, release
	u.file, release = nil, nil // the import closes the file and frees the slot
	// The service runs the import, past this request, and stops it on
	// shutdown; then the file is closed (it is unlinked already) and the
	// slot freed.
	w.svc.Imports.Go(imp, file, func() {
		file.Close()
		done()
	})

	if !partial(c) {
		return c.Redirect(contacts.ImportReportURL(shown.ID), fiber.StatusSeeOther)
	}
	d, err := w.importPage(c, contacts.ImportForm{ContactTypeID: u.in.ContactTypeID})
	if err != nil {
		return err
	}
	names, _, err := w.typeNames(c)
	if err != nil {
		return err
	}
	p := contacts.Progress{Import: shown, TypeName: names[shown.ContactTypeID], OnImportPage: true}
	c.Set("HX-Reswap", "outerHTML show:#import-current:top") // on a phone the panel is below the form
	return render(c, fiber.StatusOK, contacts.ImportFormView(d.Form), contacts.CurrentOOB(p), contacts.RecentImports(d.Recent, true))
}

// refuseUpload answers the import form with a validation error's
// messages (422): beside the type, the basis and the file, the rest above
// the form.
func (w *Web) refuseUpload(c *fiber.Ctx, u *upload, errs ...error) error {
	form := contacts.ImportForm{ContactTypeID: u.in.ContactTypeID, Basis: strings.TrimSpace(u.basis), BasisOther: u.other, Errors: views.Errors{}}
	for _, err := range errs {
		for field, msgs := range fieldErrors(err) {
			form.Errors[field] = append(form.Errors[field], msgs...)
		}
	}
	for field, msgs := range form.Errors {
		if field != "contact_type_id" && field != "file" && field != "basis" && field != "basis_other" {
			form.Other = append(form.Other, msgs...)
		}
	}
	d, derr := w.importPage(c, form)
	if derr != nil {
		return derr
	}
	if partial(c) {
		return render(c, fiber.StatusUnprocessableEntity, contacts.ImportFormView(d.Form))
	}
	return page(c, fiber.StatusUnprocessableEntity, "Import contacts", views.NavContacts, contacts.ImportsPage(d))
}

// readColumnChoice reads one field of the preview's column choices
// (column[i], new_name[i], new_type[i]) into in; other fields are passed
// over. Each value is short; an index past the bound is refused.
func readColumnChoice(in *service.ImportFile, name string, part io.Reader) error {
	key, idx, ok := strings.Cut(strings.TrimSuffix(name, "]"), "[")
	if !ok || (key != "column" && key != "new_name" && key != "new_type") {
		return nil
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= 1000 {
		return fiber.ErrBadRequest
	}
	v, _ := io.ReadAll(io.LimitReader(part, 256))
	if in.Columns == nil {
		in.Columns = map[int]service.ImportColumn{}
	}
	c := in.Columns[i]
	switch key {
	case "column":
		c.Field = strings.TrimSpace(string(v))
	case "new_name":
		c.NewName = strings.TrimSpace(string(v))
	case "new_type":
		c.NewType = strings.TrimSpace(string(v))
	}
	in.Columns[i] = c
	return nil
}

// importParam reads the route's import and finds it. Errors: ErrNotFound.
func (w *Web) importParam(c *fiber.Ctx) (contacts.Progress, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return contacts.Progress{}, err
	}
	imp, err := w.svc.Imports.Get(c.UserContext(), accountID(c), id)
	if err != nil {
		return contacts.Progress{}, err
	}
	names, _, err := w.typeNames(c)
	if err != nil {
		return contacts.Progress{}, err
	}
	return contacts.Progress{Import: *imp, TypeName: names[imp.ContactTypeID]}, nil
}

// importReport shows one import: its progress while it runs, its report after.
func (w *Web) importReport(c *fiber.Ctx) error {
	p, err := w.importParam(c)
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Import of "+p.Import.FileName, views.NavContacts, contacts.ReportPage(p))
}

// importProgress answers the progress panel that polls it; once the
// import has ended, the panel it answers polls no more (and, on the
// import page, the recent imports are redrawn with it, out of band).
func (w *Web) importProgress(c *fiber.Ctx) error {
	p, err := w.importParam(c)
	if err != nil {
		return err
	}
	if !partial(c) {
		return c.Redirect(contacts.ImportReportURL(p.Import.ID), fiber.StatusSeeOther)
	}
	p.OnImportPage = c.Query("recent") == "1"
	if p.Running() || !p.OnImportPage {
		return render(c, fiber.StatusOK, contacts.ProgressPanel(p))
	}
	d, err := w.importPage(c, contacts.ImportForm{})
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.ProgressPanel(p), contacts.RecentImports(d.Recent, true))
}
