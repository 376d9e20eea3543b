package api

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"os"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
)

// UploadPath is the one API route whose body may exceed the 10 MB limit.
const UploadPath = "/api/contacts/upload-csv"

var errUploadTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge, textTooLarge)

func (a *API) csvSample(c *fiber.Ctx) error {
	var b bytes.Buffer
	if err := a.svc.Imports.WriteSample(c.UserContext(), account(c), &b); err != nil {
		return fail(c, err)
	}
	c.Set(fiber.HeaderContentType, "text/csv; charset=utf-8")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="contacts-sample.csv"`)
	return c.Send(b.Bytes())
}

// uploadCSV streams the multipart body: the CSV part is imported as it
// arrives, never held in memory. The contact type is checked as soon as
// it is known: from the query string before the body is read, from a
// part before the file when the file arrives. A file that comes before
// its type is kept in an unlinked temporary file (at most
// service.MaxSpool bytes, and only when the account has a contact type at
// all), and the type is checked the moment its part arrives. At most
// service.MaxUploads uploads of one account run at once (429 beyond).
func (a *API) uploadCSV(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), account(c)
	cl := int64(c.Request().Header.ContentLength())
	if cl > 0 && cl > a.opt.MaxUploadBytes {
		return fail(c, errUploadTooLarge)
	}
	in := service.ImportFile{ContactTypeID: strings.TrimSpace(strings.Clone(c.Query("contact_type_id")))}
	boundary := string(c.Request().Header.MultipartFormBoundary())
	if boundary == "" { // not multipart: there is no file, say what is missing
		f, err := parseForm(c)
		if err != nil {
			return fail(c, err)
		}
		if v := f.Get("contact_type_id"); v != "" {
			in.ContactTypeID = v
		}
		_, err = a.svc.Imports.CheckImport(ctx, acct, in)
		return fail(c, err)
	}
	if in.ContactTypeID != "" {
		if _, err := a.svc.Imports.CheckType(ctx, acct, in.ContactTypeID); err != nil {
			return fail(c, err)
		}
	}
	release, err := a.svc.Imports.AcquireUpload(ctx, acct)
	if err != nil {
		return fail(c, err)
	}
	defer release()
	var body io.Reader = c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	} else if conn := c.Context().Conn(); conn != nil {
		// Read at a pace, not within the server's 60 s for a request.
		body = service.PacedReader(body, conn.SetReadDeadline)
	}
	mr := multipart.NewReader(service.LimitReader(body, a.opt.MaxUploadBytes, errUploadTooLarge), boundary)
	var spooled *os.File // the file, when it came before its type
	var result error
	imported := false
	defer func() {
		if spooled != nil {
			spooled.Close()
		}
	}()
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, errUploadTooLarge) {
				return fail(c, err)
			}
			return fail(c, errBadBody)
		}
		switch part.FormName() {
		case "contact_type_id":
			v, _ := io.ReadAll(io.LimitReader(part, 64))
			in.ContactTypeID = strings.TrimSpace(string(v))
			if spooled != nil && !imported {
				// The file came first: check its type now (the spool is
				// closed, and so gone, on the way out).
				if _, err := a.svc.Imports.CheckImport(ctx, acct, in); err != nil {
					return fail(c, err)
				}
			}
		case "file":
			if in.Present || imported { // one file per upload: a second one is read past
				break
			}
			in.Present, in.FileName = true, strings.Clone(part.FileName())
			if in.ContactTypeID == "" {
				if spooled, err = a.spool(c, acct, cl, part); err != nil {
					if errors.Is(err, errSpoolTooLarge) {
						return failure(c, fiber.StatusRequestEntityTooLarge, errSpoolTooLarge.Message)
					}
					return fail(c, err)
				}
				break
			}
			typeID, err := a.svc.Imports.CheckImport(ctx, acct, in)
			if err != nil {
				return fail(c, err)
			}
			imported, result = true, a.runImport(c, acct, typeID, in.FileName, part)
		}
		part.Close()
	}
	if imported {
		return result
	}
	typeID, err := a.svc.Imports.CheckImport(ctx, acct, in)
	if err != nil {
		return fail(c, err)
	}
	if spooled == nil { // the account has no contact type: CheckImport said so
		return fail(c, service.ErrNotFound)
	}
	if _, err := spooled.Seek(0, io.SeekStart); err != nil {
		return fail(c, err)
	}
	return a.runImport(c, acct, typeID, in.FileName, spooled)
}

// errSpoolTooLarge refuses a file over service.MaxSpool that comes before
// its contact type.
var errSpoolTooLarge = fiber.NewError(fiber.StatusRequestEntityTooLarge,
	"The file is too large to be held until contact_type_id arrives: send contact_type_id before the file, or in the query string.")

// spool keeps a file whose contact type is not known yet in an unlinked
// temporary file. It keeps nothing (and reads the part past, returning
// nil) when the account has no contact type: whatever type comes later,
// the answer is a refusal. A body declared larger than the spool may hold
// is refused before the file is read.
func (a *API) spool(c *fiber.Ctx, acct, declared int64, part io.Reader) (*os.File, error) {
	ok, err := a.svc.Imports.HasTypes(c.UserContext(), acct)
	if err != nil || !ok {
		return nil, err
	}
	if declared > a.maxSpool() {
		return nil, errSpoolTooLarge
	}
	f, err := service.Spool()
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(f, service.LimitReader(part, a.maxSpool(), errSpoolTooLarge)); err != nil {
		f.Close()
		if errors.Is(err, errSpoolTooLarge) {
			return nil, errSpoolTooLarge
		}
		return nil, uploadErr(err)
	}
	return f, nil
}

// maxSpool is service.MaxSpool, or less by Options.
func (a *API) maxSpool() int64 {
	if a.opt.MaxSpoolBytes > 0 {
		return a.opt.MaxSpoolBytes
	}
	return service.MaxSpool
}

func uploadErr(err error) error {
	if errors.Is(err, errUploadTooLarge) {
		return errUploadTooLarge
	}
	return errBadBody
}

// runImport imports r and answers the spec's text plus the report.
func (a *API) runImport(c *fiber.Ctx, acct, typeID int64, name string, r io.Reader) error {
	ctx := c.UserContext()
	imp, err := a.svc.Imports.Start(ctx, acct, typeID, name, int64(c.Request().Header.ContentLength()))
	if err != nil {
		return fail(c, err)
	}
	imp.Consent = consentAt(c, models.ConsentImport) // the basis: api
	if err := a.svc.Imports.Import(ctx, imp, r); err != nil {
		return fail(c, err) // validation (no email column, empty file), 413, or a failure
	}
	return c.JSON(importAnswer{Status: "success", Message: "Imported Successfully", Import: imp})
}

// importAnswer is the spec's success envelope plus, beyond the spec, the
// import's report (created, updated, skipped, rejected rows by line).
type importAnswer struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Import  any    `json:"import"`
}
