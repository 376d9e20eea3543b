package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"herald/api"
)

// The OpenAPI document is held true by three checks: its operations are
// exactly the mounted routes, it is valid OpenAPI 3.1, and every answer
// the API tests receive (through do, doRaw and call) validates against its
// operation's response schema (checkAnswer), so a schema that lies fails
// the suite.

var (
	docOnce      sync.Once
	docValidator validator.Validator
	docOps       map[string]bool // "GET /contacts/list"
	docErr       error
)

func openAPIValidator() (validator.Validator, map[string]bool, error) {
	docOnce.Do(func() {
		raw := api.OpenAPI()
		doc, err := libopenapi.NewDocument(raw)
		if err != nil {
			docErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			docErr = fmt.Errorf("validator: %v", errs)
			return
		}
		docValidator = v
		var parsed struct {
			Paths map[string]map[string]any `json:"paths"`
		}
		if err := json.Unmarshal(raw, &parsed); err != nil {
			docErr = err
			return
		}
		docOps = map[string]bool{}
		for p, item := range parsed.Paths {
			for m := range item {
				docOps[strings.ToUpper(m)+" "+p] = true
			}
		}
	})
	return docValidator, docOps, docErr
}

// checkAnswer validates one answer of the API against the document: the
// status code, content type and body against the operation's response.
// An answer to a path or method the document does not name (404 Not Found,
// 405) must be the failure envelope.
func checkAnswer(t testing.TB, method, target string, code int, header http.Header, body []byte) {
	t.Helper()
	if problems := answerProblems(method, target, code, header, body); problems != "" {
		sample := body
		if len(sample) > 600 {
			sample = sample[:600]
		}
		t.Fatalf("openapi: the answer to %s %s (%d) does not fit the document:\n%s\nanswer: %s", method, target, code, problems, sample)
	}
}

// answerProblems is what checkAnswer finds wrong ("" when the answer fits).
func answerProblems(method, target string, code int, header http.Header, body []byte) string {
	v, ops, err := openAPIValidator()
	if err != nil {
		return "the document: " + err.Error()
	}
	path, _, _ := strings.Cut(target, "?")
	if !strings.HasPrefix(path, "/api/") || method == http.MethodHead {
		return "" // a HEAD answer has no body to hold to a schema
	}
	if !ops[method+" "+strings.TrimPrefix(path, "/api")] {
		var env struct {
			Status string          `json:"status"`
			Errors json.RawMessage `json:"errors"`
		}
		if json.Unmarshal(body, &env) != nil || env.Status != "failed" || len(env.Errors) == 0 {
			return "not in the document, and not a failure"
		}
		return ""
	}
	req := httptest.NewRequest(method, target, nil)
	resp := &http.Response{StatusCode: code, Header: header.Clone(), Body: io.NopCloser(bytes.NewReader(body)), Request: req}
	ok, errs := v.ValidateHttpResponse(req, resp)
	if ok {
		return ""
	}
	var msgs []string
	for _, e := range errs {
		m := e.Message + ": " + e.Reason
		for _, se := range e.SchemaValidationErrors {
			m += " [" + se.FieldPath + ": " + se.Reason + "]"
		}
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "invalid")
	}
	return strings.Join(msgs, "\n")
}

// TestOpenAPICatchesLies is the control of checkAnswer: answers that do
// not fit the document are caught.
func TestOpenAPICatchesLies(t *testing.T) {
	t.Parallel()
	js := http.Header{"Content-Type": {"application/json"}}
	for _, c := range []struct {
		method, path string
		code         int
		body         string
		fits         bool
	}{
		{"GET", "/api/contacts-type", 200, `{"status":"success","message":{"contactTypes":[]}}`, true},
		{"GET", "/api/contacts-type", 200, `{"status":"success","message":"Added Successfully"}`, false},
		{"GET", "/api/contacts-type", 200, `{"status":"success","message":{"contactTypes":[{"id":1}]}}`, false},
		{"POST", "/api/contacts-type/add", 200, `{"status":"success","message":"Added successfully"}`, false},
		{"DELETE", "/api/contacts-type/delete?contact_type_id=1", 200, `{"status":"success","errors":"Deleted Successfully"}`, true},
		{"DELETE", "/api/contacts-type/delete?contact_type_id=1", 200, `{"status":"success","message":"Deleted Successfully"}`, false},
		{"GET", "/api/segment/email/list?segment_id=1", 404, `{"status":"failed","errors":"Record not found"}`, true},
		{"GET", "/api/segment/email/list?segment_id=1", 404, `{"status":"failed","errors":"Record Not Found"}`, false},
		{"GET", "/api/senders", 401, `{"status":"failed","errors":{"PublicKey":["The public key field is required."]}}`, true},
		{"GET", "/api/senders", 401, `{"status":"failed","errors":{"Key":["x"]}}`, false},
		{"GET", "/api/nowhere", 404, `{"status":"failed","errors":"Not Found"}`, true},
		{"GET", "/api/nowhere", 200, `{"status":"success","message":"x"}`, false},
	} {
		for _, h := range []http.Header{js, {"Content-Type": {"application/json; charset=utf-8"}}} {
			got := answerProblems(c.method, c.path, c.code, h, []byte(c.body))
			if (got == "") != c.fits {
				t.Errorf("%s %s %d %s (%s): fits=%v, problems %q", c.method, c.path, c.code, c.body, h.Get("Content-Type"), got == "", got)
			}
		}
	}
}

func TestOpenAPIIsValid(t *testing.T) {
	t.Parallel()
	v, _, err := openAPIValidator()
	if err != nil {
		t.Fatal(err)
	}
	if ok, errs := v.ValidateDocument(); !ok {
		for _, e := range errs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s %s: %s", se.FieldPath, se.KeywordLocation, se.Reason)
			}
		}
	}
	// The control: a broken document is refused by the same check.
	broken, err := libopenapi.NewDocument([]byte(`{"openapi":"3.1.0","info":{"title":"x"},"paths":{"/a":{"get":{"responses":{"200":{"description":1}}}}}}`))
	if err == nil {
		if bv, errs := validator.NewValidator(broken); len(errs) == 0 {
			if ok, _ := bv.ValidateDocument(); ok {
				t.Fatal("a broken document passes the check")
			}
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil || doc["openapi"] != "3.1.0" {
		t.Fatalf("not an OpenAPI 3.1 document: %v %v", err, doc["openapi"])
	}
}

// TestOpenAPIMatchesRoutes walks the routes the API mounts: each is in the
// document, and each operation of the document is mounted.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	_, ops, err := openAPIValidator()
	if err != nil {
		t.Fatal(err)
	}
	app := fiber.New()
	api.New(nil, api.Options{}).Mount(app.Group("/api"))
	mounted := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		if r.Method == fiber.MethodHead || !strings.HasPrefix(r.Path, "/api/") {
			continue // Fiber adds HEAD to every GET
		}
		mounted[r.Method+" "+strings.TrimPrefix(r.Path, "/api")] = true
	}
	if len(mounted) < 70 {
		t.Fatalf("only %d routes found: %v", len(mounted), mounted)
	}
	var missing, extra []string
	for k := range mounted {
		if !ops[k] {
			missing = append(missing, k)
		}
	}
	for k := range ops {
		if !mounted[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("mounted but not in the document: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("in the document but not mounted: %v", extra)
	}
}

// TestOpenAPIServedWithoutKeys: the document answers without keys, every
// other route still wants them.
func TestOpenAPIServedWithoutKeys(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	req := httptest.NewRequest("GET", "/api/openapi.json", nil)
	resp, err := e.app.Test(req, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !bytes.Equal(b, api.OpenAPI()) {
		t.Fatalf("openapi.json: %d %s %.200s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	for _, p := range []string{"/api/contacts/list", "/api/senders", "/api/openapi.json/x"} {
		r := do(t, e.app, "GET", p, nil, nil)
		if r.Code != 401 {
			t.Fatalf("%s without keys: %d %s", p, r.Code, r.raw)
		}
	}
}
