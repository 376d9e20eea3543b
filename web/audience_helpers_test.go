package web_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
)

// uploadOpts say how an upload is sent.
type uploadOpts struct {
	hx           bool       // as htmx sends it: HX-Request and the token in X-CSRF-Token
	tokenInQuery bool       // as a form without JavaScript sends it: ?_csrf= in the action
	noToken      bool       // no token at all
	typeAfter    bool       // the contact type's part after the file's
	fileName     string     // "" sends no file part
	fields       url.Values // more form fields, after the file (the preview's column choices)
	basis        []string   // the basis part and its words ("" none); nil: "customers"
}

// upload posts a multipart body with a contact type and a file, as the
// import form does.
func (c *client) upload(typeID, content string, o uploadOpts) *response {
	c.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	writeType := func() { _ = mw.WriteField("contact_type_id", typeID) }
	switch {
	case o.basis == nil:
		_ = mw.WriteField("basis", "customers")
	case o.basis[0] != "":
		_ = mw.WriteField("basis", o.basis[0])
	}
	if len(o.basis) > 1 {
		_ = mw.WriteField("basis_other", o.basis[1])
	}
	if !o.typeAfter {
		writeType()
	}
	if o.fileName != "" {
		fw, err := mw.CreateFormFile("file", o.fileName)
		if err != nil {
			c.t.Fatal(err)
		}
		_, _ = io.WriteString(fw, content)
	}
	if o.typeAfter {
		writeType()
	}
	for k, vs := range o.fields {
		for _, v := range vs {
			_ = mw.WriteField(k, v)
		}
	}
	mw.Close()
	path := "/contacts/import"
	if o.tokenInQuery && !o.noToken {
		path += "?_csrf=" + url.QueryEscape(c.csrf)
	}
	req := httptest.NewRequest("POST", path, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if o.hx {
		req.Header.Set("HX-Request", "true")
		if !o.noToken {
			req.Header.Set("X-CSRF-Token", c.csrf)
		}
	}
	for k, v := range c.cookies {
		req.AddCookie(&http.Cookie{Name: k, Value: v})
	}
	resp, err := c.a.app.Test(req, -1)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := &response{status: resp.StatusCode, header: resp.Header, body: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		if r.doc, err = parseHTML(r.body); err != nil {
			c.t.Fatal(err)
		}
	}
	return r
}

// waitImport polls an import's progress partial, as the panel of the
// import page does, until it has ended, and returns the last answer.
func (c *client) waitImport(id string) *response {
	c.t.Helper()
	var r *response
	eventually.True(c.t, 30*time.Second, "the import did not end", func() bool {
		r = c.hxGet("/contacts/import/" + id + "/progress?recent=1")
		wantStatus(c.t, r, http.StatusOK)
		panel := first(r.doc, "#import-progress")
		if panel == nil {
			c.t.Fatalf("no panel:\n%s", r.body)
		}
		if st := attr(panel, "data-status"); st != "running" {
			if attr(panel, "hx-trigger") != "" {
				c.t.Fatal("an ended import still polls")
			}
			return true
		}
		if attr(panel, "hx-trigger") != "every 500ms" || !strings.HasPrefix(attr(panel, "hx-get"), "/contacts/import/"+id+"/progress") {
			c.t.Fatalf("a running import does not poll:\n%s", r.body)
		}
		return false
	})
	return r
}

// audience makes contact types, custom fields and contacts through the service.
type audience struct {
	t    *testing.T
	svc  *service.Service
	acct int64
}

func (a *testApp) audience(acct int64) *audience { return &audience{t: a.t, svc: a.svc, acct: acct} }

func (au *audience) contactType(name string) int64 {
	au.t.Helper()
	ct, err := au.svc.ContactTypes.Create(context.Background(), au.acct, name)
	if err != nil {
		au.t.Fatal(err)
	}
	return ct.ID
}

func (au *audience) field(name, typ string) int64 {
	au.t.Helper()
	f, err := au.svc.Fields.Create(context.Background(), au.acct, service.FieldInput{FieldName: name, FieldType: typ})
	if err != nil {
		au.t.Fatal(err)
	}
	return f.ID
}

func (au *audience) contact(typeID int64, email, first, last, country string, custom map[string]string) int64 {
	au.t.Helper()
	v, err := au.svc.Contacts.Create(context.Background(), au.acct, service.ContactInput{
		ContactTypeID: strconv.FormatInt(typeID, 10), Email: email, FirstName: first, LastName: last, Country: country, Custom: custom,
	})
	if err != nil {
		au.t.Fatal(err)
	}
	return v.ID
}

func (au *audience) get(id int64) *models.ContactView {
	au.t.Helper()
	v, err := au.svc.Contacts.Get(context.Background(), au.acct, id)
	if err != nil {
		au.t.Fatal(err)
	}
	return v
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// importID reads the id of the import whose panel r shows.
func importID(t *testing.T, r *response) string {
	t.Helper()
	rest, ok := strings.CutPrefix(attr(first(r.doc, "#import-progress"), "hx-get"), "/contacts/import/")
	id, _, _ := strings.Cut(rest, "/")
	if !ok || id == "" {
		t.Fatalf("no running import's panel in\n%s", r.body)
	}
	return id
}
