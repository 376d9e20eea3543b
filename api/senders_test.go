package api_test

import (
	"strconv"
	"strings"
	"testing"
)

type sender struct {
	ID              int64   `json:"id"`
	UserID          int64   `json:"user_id"`
	FromName        string  `json:"from_name"`
	FromEmail       string  `json:"from_email"`
	ReplyToEmail    string  `json:"reply_to_email"`
	CountryID       int64   `json:"country_id"`
	StateID         int64   `json:"state_id"`
	CityID          int64   `json:"city_id"`
	ZipCode         string  `json:"zip_code"`
	CompanyAddress  string  `json:"company_address"`
	CompanyAddress2 string  `json:"company_address2"`
	Nickname        string  `json:"nickname"`
	IsVerified      int     `json:"is_verified"`
	Utr             string  `json:"utr"`
	SendAt          *string `json:"send_at"`
	CreatedAt       string  `json:"created_at"`
	DeletedAt       *string `json:"deleted_at"`
}

func senderForm(kv ...string) map[string]string {
	m := map[string]string{"from_name": "Acme News", "from_email": "News@Acme.example.com", "reply_to_email": "reply@acme.example.com",
		"country_id": "840", "company_address": "1 Main St", "nickname": "news", "zip_code": "90001"}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func toForm(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k, v)
	}
	return kv
}

func TestSenders(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectOK(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm())...)), "Added Successfully")
	for _, method := range []string{"GET", "POST"} {
		ss := list[sender](t, e.a.send(method, "/api/senders", nil), "senders")
		if len(ss) != 1 {
			t.Fatalf("%s senders: %+v", method, ss)
		}
		s := ss[0]
		if s.FromEmail != "news@acme.example.com" || s.IsVerified != 0 || len(s.Utr) != 12 || s.CountryID != 840 || s.SendAt == nil || s.DeletedAt != nil {
			t.Fatalf("sender: %+v", s)
		}
		if !regexpDateTime.MatchString(*s.SendAt) {
			t.Fatalf("send_at %q is not YYYY-MM-DD HH:MM:SS", *s.SendAt)
		}
		checkTimestamps(t, s.CreatedAt)
	}
	if len(list[sender](t, e.b.send("GET", "/api/senders", nil), "senders")) != 0 {
		t.Fatal("b sees a's senders")
	}
	id := strconv.FormatInt(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")[0].ID, 10)

	t.Run("validation", func(t *testing.T) {
		expectVAL(t, e.a.send("POST", "/api/sender/save", form()), map[string][]string{
			"from_name": {"The from name field is required."}, "from_email": {"The from email field is required."},
			"reply_to_email": {"The reply to email field is required."}, "country_id": {"The country id field is required."},
			"company_address": {"The company address field is required."}, "nickname": {"The nickname field is required."},
		})
		long := strings.Repeat("x", 256)
		expectVAL(t, e.a.send("POST", "/api/sender/save", form(toForm(senderForm("from_email", "nope", "country_id", "9999",
			"company_address", long, "company_address2", long, "state_id", "abc"))...)), map[string][]string{
			"from_email":       {"The from email must be a valid email address."},
			"country_id":       {"The selected country id is invalid."},
			"company_address":  {"The company address may not be greater than 255 characters."},
			"company_address2": {"The company address2 may not be greater than 255 characters."},
			"state_id":         {"The selected state id is invalid."},
		})
	})

	t.Run("details update delete", func(t *testing.T) {
		s := one[sender](t, e.a.send("GET", "/api/sender/details?sender_id="+id, nil), "sender")
		if s.Nickname != "news" {
			t.Fatalf("details: %+v", s)
		}
		for _, q := range []string{"", "?sender_id=x", "?sender_id=777"} {
			expectNF(t, e.a.send("GET", "/api/sender/details"+q, nil), "Record Not Found")
			expectNF(t, e.a.send("GET", "/api/sender/resend-mail"+q, nil), "Record Not Found")
		}
		expectNF(t, e.b.send("GET", "/api/sender/details?sender_id="+id, nil), "Record Not Found")
		expectOK(t, e.a.send("GET", "/api/sender/resend-mail?sender_id="+id, nil), "Verification Mail Send")
		expectNF(t, e.b.send("GET", "/api/sender/resend-mail?sender_id="+id, nil), "Record Not Found")

		expectOK(t, e.a.send("POST", "/api/sender/update", form(toForm(senderForm("sender_id", id, "nickname", "renamed"))...)), "Updated Successfully")
		if s := one[sender](t, e.a.send("GET", "/api/sender/details?sender_id="+id, nil), "sender"); s.Nickname != "renamed" || s.Utr == "" {
			t.Fatalf("after update: %+v", s)
		}
		expectVAL(t, e.a.send("POST", "/api/sender/update", form(toForm(senderForm())...)), map[string][]string{"sender_id": {"The sender id field is required."}})
		expectNF(t, e.b.send("POST", "/api/sender/update", form(toForm(senderForm("sender_id", id))...)), "Record Not Found")

		expectNF(t, e.b.send("DELETE", "/api/sender/delete?sender_id="+id, nil), "Record Not Found")
		r := e.a.send("DELETE", "/api/sender/delete?sender_id="+id, nil)
		if r.Code != 200 || r.Status != "success" || r.text(r.Errors) != "Deleted Successfully" {
			t.Fatalf("delete: %d %s", r.Code, r.raw)
		}
		expectNF(t, e.a.send("DELETE", "/api/sender/delete?sender_id="+id, nil), "Record Not Found")
		if len(list[sender](t, e.a.send("GET", "/api/senders", nil), "senders")) != 0 {
			t.Fatal("deleted sender listed")
		}
	})
}

func TestDynamicContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "company_name", "field_type", "text")), "Added Successfully")
	r := e.a.send("GET", "/api/get-dynamic/content", nil)
	names := list[string](t, r, "contents")
	joined := strings.Join(names, ",")
	for _, want := range []string{"first_name", "postal_code", "company_name", "sender_name", "sender_address", "unsubscribe_preferences"} {
		if !strings.Contains(","+joined+",", ","+want+",") {
			t.Fatalf("%q missing from %v", want, names)
		}
	}
	if strings.Contains(strings.Join(list[string](t, e.b.send("GET", "/api/get-dynamic/content", nil), "contents"), ","), "company_name") {
		t.Fatal("b sees a's custom field")
	}
}

type designTemplate struct {
	ID           int64   `json:"id"`
	TemplateName string  `json:"template_name"`
	PreviewImage string  `json:"preview_image"`
	JSONCode     *string `json:"json_code"`
	HTMLCode     string  `json:"html_code"`
	IsBlank      int     `json:"is_blank"`
	CreatedAt    *string `json:"created_at"`
}

func TestDesignTemplates(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ts := list[designTemplate](t, e.a.send("GET", "/api/get-design/template", nil), "templates")
	if len(ts) < 7 || ts[0].ID != 1 || ts[0].IsBlank != 1 || ts[1].IsBlank != 0 {
		t.Fatalf("templates: %d, first %+v", len(ts), ts[0])
	}
	for _, d := range ts {
		if d.TemplateName == "" || !strings.HasSuffix(d.PreviewImage, ".png") || !strings.Contains(d.HTMLCode, "((unsubscribe_preferences))") || d.JSONCode == nil {
			t.Fatalf("design %d: %+v", d.ID, d.TemplateName)
		}
	}
}
