package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"herald/models"
	"herald/service"
)

func TestFormsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ct, err := e.svc.ContactTypes.Create(ctx, e.a.id, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := e.svc.ContactTypes.Create(ctx, e.b.id, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Fields.Create(ctx, e.a.id, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	g, err := e.svc.Groups.Create(ctx, e.a.id, service.GroupInput{GroupName: "News", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}

	r := e.a.send("POST", "/api/forms/save", form("name", "Weekly", "contact_type_id", itoa(ct.ID), "fields[]", "company", "group_ids[]", itoa(g.ID),
		"redirect_url", "https://shop.example.com/thanks", "language", "pt-br"))
	if r.Code != 200 || r.Status != "success" {
		t.Fatalf("save: %d %s", r.Code, r.raw)
	}
	var saved struct {
		ID       int64  `json:"id"`
		PublicID string `json:"public_id"`
	}
	if err := json.Unmarshal(r.Message, &saved); err != nil || saved.ID == 0 || saved.PublicID == "" {
		t.Fatalf("save answer %s", r.raw)
	}
	// JSON bodies with arrays work too; double_opt_in defaults to 1.
	r = e.a.send("POST", "/api/forms/save", `{"name":"Second","contact_type_id":`+itoa(ct.ID)+`,"double_opt_in":0,"fields":["company"]}`)
	if r.Code != 200 {
		t.Fatalf("save JSON: %s", r.raw)
	}

	forms := list[models.Form](t, e.a.send("GET", "/api/forms", nil), "forms")
	if len(forms) != 2 || forms[0].DoubleOptIn != 1 || forms[0].Language != "pt-BR" || len(forms[0].Fields) != 1 || len(forms[0].GroupIDs) != 1 ||
		forms[1].DoubleOptIn != 0 || forms[1].GroupIDs == nil {
		t.Fatalf("list %+v", forms)
	}
	if other := list[models.Form](t, e.b.send("GET", "/api/forms", nil), "forms"); len(other) != 0 {
		t.Fatalf("another account sees %+v", other)
	}

	expectVAL(t, e.a.send("POST", "/api/forms/save", form("contact_type_id", itoa(ct.ID), "redirect_url", "javascript:alert(1)")), map[string][]string{
		"name":         {"The name field is required."},
		"redirect_url": {"The redirect url must be a valid URL."},
	})
	expectVAL(t, e.a.send("POST", "/api/forms/save", form("name", "x\r\ny", "contact_type_id", itoa(ct.ID))), map[string][]string{
		"name": {"The name must not contain line breaks."},
	})
	expectNF(t, e.a.send("POST", "/api/forms/save", form("name", "Theirs", "contact_type_id", itoa(theirs.ID))), "Record Not Found")
	expectNF(t, e.b.send("POST", "/api/forms/save", form("name", "Theirs", "contact_type_id", itoa(theirs.ID), "group_ids[]", itoa(g.ID))), "Record Not Found")

	expectOK(t, e.a.send("POST", "/api/forms/update?id="+itoa(saved.ID), form("name", "Renamed", "contact_type_id", itoa(ct.ID), "double_opt_in", "0")), "Updated Successfully")
	expectNF(t, e.b.send("POST", "/api/forms/update", form("id", itoa(saved.ID), "name", "Mine", "contact_type_id", itoa(theirs.ID))), "Record Not Found")
	expectNF(t, e.b.send("DELETE", "/api/forms/delete?id="+itoa(saved.ID), nil), "Record Not Found")
	expectNF(t, e.a.send("DELETE", "/api/forms/delete?id=abc", nil), "Record Not Found")
	expectOK(t, e.a.send("DELETE", "/api/forms/delete?id="+itoa(saved.ID), nil), "Deleted Successfully")
	if forms := list[models.Form](t, e.a.send("GET", "/api/forms", nil), "forms"); len(forms) != 1 || forms[0].Name != "Second" {
		t.Fatalf("after delete %+v", forms)
	}
}

// TestFormsAPIConfirmMailFields: the extra fields confirm_subject and
// confirm_body round-trip through save, update and the list (JSON and
// form-encoded), a body without the placeholder is refused, and update
// without them is herald's own mail again.
func TestFormsAPIConfirmMailFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	ct, err := e.svc.ContactTypes.Create(ctx, e.a.id, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	body := "Hallo <b>du</b>!\n\nBestätige hier: ((confirm_url))"
	r := e.a.send("POST", "/api/forms/save", `{"name":"Weekly","contact_type_id":`+itoa(ct.ID)+`,"confirm_subject":"Bitte bestätigen","confirm_body":`+jsonString(t, body)+`}`)
	if r.Code != 200 {
		t.Fatalf("save: %s", r.raw)
	}
	var saved struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.Message, &saved); err != nil {
		t.Fatal(err)
	}
	forms := list[models.Form](t, e.a.send("GET", "/api/forms", nil), "forms")
	if len(forms) != 1 || forms[0].ConfirmSubject != "Bitte bestätigen" || forms[0].ConfirmBody != body {
		t.Fatalf("list %+v", forms)
	}
	expectVAL(t, e.a.send("POST", "/api/forms/save", form("name", "W", "contact_type_id", itoa(ct.ID), "confirm_body", "Click the link")), map[string][]string{
		"confirm_body": {"The confirm body must contain ((confirm_url)), where the link that confirms the address goes."},
	})
	expectOK(t, e.a.send("POST", "/api/forms/update?id="+itoa(saved.ID), form("name", "Weekly", "contact_type_id", itoa(ct.ID),
		"confirm_subject", "Confirm, please", "confirm_body", "((confirm_url))")), "Updated Successfully")
	forms = list[models.Form](t, e.a.send("GET", "/api/forms", nil), "forms")
	if forms[0].ConfirmSubject != "Confirm, please" || forms[0].ConfirmBody != "((confirm_url))" {
		t.Fatalf("after update %+v", forms[0])
	}
	expectOK(t, e.a.send("POST", "/api/forms/update?id="+itoa(saved.ID), form("name", "Weekly", "contact_type_id", itoa(ct.ID))), "Updated Successfully")
	forms = list[models.Form](t, e.a.send("GET", "/api/forms", nil), "forms")
	if forms[0].ConfirmSubject != "" || forms[0].ConfirmBody != "" {
		t.Fatalf("after an update without them %+v", forms[0])
	}
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
