package api

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"os"
	"strings"

	"github.com/gofiber/fiber/v2"

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
// arrives, never held in memory. A contact_type_id sent after the file
// part is handled by spooling the file to a temporary file first.
func (a *API) uploadCSV(c *fiber.Ctx) error {
	ctx, acct := c.UserContext(), account(c)
	if cl := c.Request().Header.ContentLength(); cl > 0 && int64(cl) > a.opt.MaxUploadBytes {
		return fail(c, errUploadTooLarge)
	}
	in := service.ImportFile{}
	boundary := string(c.Request().Header.MultipartFormBoundary())
	if boundary == "" { // not multipart: there is no file, say what is missing
		f, err := parseForm(c)
		if err != nil {
			return fail(c, err)
		}
		in.ContactTypeID = f.Get("contact_type_id")
		_, err = a.svc.Imports.CheckImport(ctx, acct, in)
		return fail(c, err)
	}
	var body io.Reader = c.Context().RequestBodyStream()
	if body == nil {
		body = bytes.NewReader(c.Body())
	}
	mr := multipart.NewReader(service.LimitReader(body, a.opt.MaxUploadBytes, errUploadTooLarge), boundary)
	var spooled *os.File
	defer func() {
		if spooled != nil {
			spooled.Close()
			os.Remove(spooled.Name())
		}
	}()
	var result error
	imported := false
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
		case "file":
			in.Present, in.FileName = true, part.FileName()
			if in.ContactTypeID == "" {
				// The type comes later (or never): keep the file on disk.
				if spooled, err = os.CreateTemp("", "herald-upload-*.csv"); err != nil {
					return fail(c, err)
				}
				if _, err := io.Copy(spooled, part); err != nil {
					return fail(c, uploadErr(err))
				}
				continue
			}
			typeID, err := a.svc.Imports.CheckImport(ctx, acct, in)
			if err != nil {
				return fail(c, err)
			}
			imported, result = true, a.runImport(c, acct, typeID, in.FileName, part)
		}
		part.Close()
	}
	if !imported {
		typeID, err := a.svc.Imports.CheckImport(ctx, acct, in)
		if err != nil {
			return fail(c, err)
		}
		if _, err := spooled.Seek(0, io.SeekStart); err != nil {
			return fail(c, err)
		}
		result = a.runImport(c, acct, typeID, in.FileName, spooled)
	}
	return result
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
	if err := a.svc.Imports.Run(ctx, imp, r); err != nil {
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
