package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"herald/dbtest"
	"herald/models"
	"herald/service"
)

// FuzzAPI drives the whole /api/ surface of the app as cmd/herald wires it
// (newApp over a real database, an account with records of every kind)
// with random methods, paths of the route table and unknown ones, query
// strings, bodies in every encoding and none, present, absent and wrong
// key headers, invalid UTF-8 and huge values. Every answer must be the
// JSON envelope (status success or failed, failures with errors, a JSON
// Content-Type), never a 5xx, and never a stack trace or SQL.
//
// `go test` runs the seed corpus (every route with every method, its good
// body in each encoding, each kind of id, header and huge value);
// `go test -run '^$' -fuzz FuzzAPI -parallel 1 ./cmd/herald` explores.
func FuzzAPI(f *testing.F) {
	fx := newFuzzApp(f)
	for _, s := range fx.seeds() {
		f.Add(s.method, s.route, s.enc, s.hdr, s.id, s.big, s.query, s.body, s.extra)
	}
	f.Fuzz(func(t *testing.T, method, route, enc, hdr, id uint8, big uint16, query string, body []byte, extra string) {
		req := fx.build(method, route, enc, hdr, id, big, query, body, extra)
		fx.check(t, req)
	})
}

var fuzzMethods = []string{"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"}

// fuzzUnknown are paths under /api that no route serves.
var fuzzUnknown = []string{"/api", "/api/", "/api/nowhere", "/api/contacts/list/extra", "/api//contacts/list", "/api/CONTACTS/LIST",
	"/api/contacts/../senders", "/api/%2e%2e/metrics", "/api/single/send", "/api/automations/schedule/create/1"}

// fuzzCSV are the routes whose success is not JSON (a CSV file).
var fuzzCSV = map[string]bool{"/api/contacts/csv-sample/download": true, "/api/contacts/export": true}

type fuzzApp struct {
	app    *fiber.App
	svc    *service.Service
	acct   int64    // the caller's account
	gen    int      // how many times its records were made
	routes []string // the distinct /api/ paths of the route table, then fuzzUnknown
	keys   service.Keys
	// key is the query parameter naming each route's record, kind the kind
	// of record; good is the caller's value for it, foreign another
	// account's.
	key, kind, good, foreign map[string]string
	vals                     *strings.Replacer     // {kind} → the caller's record
	bodies                   map[string]url.Values // a good body of each POST route
}

type fuzzSeed struct {
	method, route, enc, hdr, id uint8
	big                         uint16
	query                       string
	body                        []byte
	extra                       string
}

// newFuzzApp builds the app over a fresh database (SQLite, or PostgreSQL
// when HERALD_TEST_DATABASE says so) with two accounts: the caller's, with
// a record of every kind, and another whose ids must be not found.
func newFuzzApp(f *testing.F) *fuzzApp {
	// One line per request at info level would drown the fuzzer's output;
	// 5xx answers are caught from the answers themselves.
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	f.Cleanup(func() { slog.SetDefault(prev) })

	ctx := context.Background()
	cfg, err := loadConfig(envFrom(map[string]string{"HERALD_API_RATE": "0"}))
	if err != nil {
		f.Fatal(err)
	}
	svc := dbtest.Service(f, service.Config{BaseURL: cfg.BaseURL, SystemFrom: "no-reply@localhost"})
	app, err := newApp(ctx, svc, cfg, nil, nil)
	if err != nil {
		f.Fatal(err)
	}
	// app.Test builds the route tree that ServeConn then uses.
	if resp, err := app.Test(httptestRequest("GET", "/healthz"), -1); err != nil || resp.StatusCode != 200 {
		f.Fatalf("healthz: %v", err)
	}

	fx := &fuzzApp{app: app, svc: svc, key: map[string]string{}, kind: map[string]string{}, foreign: map[string]string{}}
	seen := map[string]bool{}
	for _, r := range app.GetRoutes(true) {
		if strings.HasPrefix(r.Path, "/api/") && !seen[r.Path] {
			seen[r.Path] = true
			fx.routes = append(fx.routes, r.Path)
		}
	}
	sort.Strings(fx.routes)
	fx.routes = append(fx.routes, fuzzUnknown...)

	for path, kv := range map[string][2]string{
		"/api/global-unsubscribes/delete":            {"id", "unsubscriber"},
		"/api/unsubscribes-groups/details":           {"id", "group"},
		"/api/unsubscribes-groups/update":            {"id", "group"},
		"/api/unsubscribes-groups/recipients-list":   {"groupId", "group"},
		"/api/unsubscribes-groups/recipients-delete": {"id", "recipient"},
		"/api/notification-recipient/delete":         {"id", "notification"},
		"/api/contacts-type/view":                    {"contact_type_id", "ctype"},
		"/api/contacts-type/delete":                  {"contact_type_id", "ctype"},
		"/api/custom-fields/delete":                  {"id", "field"},
		"/api/contacts/list":                         {"contact_type_id", "ctype"},
		"/api/contacts/details":                      {"contact_id", "contact"},
		"/api/contacts/delete":                       {"contact_id", "contact"},
		"/api/contacts/export":                       {"contact_type_id", "ctype"},
		"/api/get/country-state-city":                {"country_id", "country"},
		"/api/sender/details":                        {"sender_id", "sender"},
		"/api/sender/delete":                         {"sender_id", "sender"},
		"/api/sender/resend-mail":                    {"sender_id", "sender"},
		"/api/segment/delete":                        {"segment_id", "segment"},
		"/api/segment/email/list":                    {"segment_id", "segment"},
		"/api/segment/email/delete":                  {"segment_recipient_id", "segment_email"},
		"/api/single/send/duplicate":                 {"utr", "send"},
		"/api/single-send/details":                   {"utr", "send"},
		"/api/single/send/delete":                    {"utr", "send"},
		"/api/automations/duplicate":                 {"utr", "automation"},
		"/api/automations/details":                   {"utr", "automation"},
		"/api/automations/pause":                     {"utr", "automation"},
		"/api/automations/set-live":                  {"utr", "automation"},
		"/api/automations/delete":                    {"utr", "automation"},
		"/api/automations/schedule":                  {"utr", "automation"},
	} {
		fx.key[path], fx.kind[path] = kv[0], kv[1]
	}
	other, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Other", Email: "other@example.com", Password: "test-passphrase-9"})
	if err != nil {
		f.Fatal(err)
	}
	theirs, err := fuzzRecords(svc, other.ID, 0)
	if err != nil {
		f.Fatal(err)
	}
	for path, kind := range fx.kind {
		fx.foreign[path] = theirs[kind]
	}
	u, keys, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Fuzz", Email: "fuzz@example.com", Password: "test-passphrase-9"})
	if err != nil {
		f.Fatal(err)
	}
	fx.acct, fx.keys = u.ID, keys
	future := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	// Good bodies; {kind} stands for the id or utr of the caller's record
	// of that kind (made anew after a deletion), {gen} for a fresh name.
	fx.bodies = map[string]url.Values{
		"/api/global-unsubscribes/save":                   {"email_address": {"a@example.com,b@example.com"}},
		"/api/global-unsubscribes/bulk-delete":            {"strIds[0]": {"{unsubscriber}"}},
		"/api/unsubscribes-groups/save":                   {"group_name": {"G"}, "description": {"D"}, "is_display": {"1"}},
		"/api/unsubscribes-groups/update":                 {"group_name": {"G2"}, "description": {"D2"}, "is_display": {"0"}},
		"/api/unsubscribes-groups/manually-add":           {"unsubscribe_groups_id": {"{group}"}, "email_address": {"c@example.com"}},
		"/api/unsubscribes-groups/recipients-bulk-delete": {"strIds[]": {"{recipient}"}},
		"/api/notification-recipient/save":                {"email_address": {"n@example.com"}, "email_owner": {"N"}},
		"/api/notification-recipient/bulk-delete":         {"strIds[]": {"{notification}"}},
		"/api/contacts-type/add":                          {"name": {"Buyers"}},
		"/api/contacts-type/update":                       {"id": {"{ctype}"}, "name": {"Clients {gen}"}},
		"/api/custom-fields/save":                         {"field_name": {"age"}, "field_type": {"number"}},
		"/api/contacts/add": {"contact_type_id": {"{ctype}"}, "email": {"new@example.com"}, "country": {"840"}, "first_name": {"New"},
			"custom_field[company]": {"Acme"}},
		"/api/contacts/upload-csv":  {"contact_type_id": {"{ctype}"}},
		"/api/contacts/update":      {"contact_id": {"{contact}"}, "contact_type_id": {"{ctype}"}, "email": {"ann@example.com"}, "country": {"FR"}},
		"/api/contacts/bulk-delete": {"strIds[]": {"{contact}"}},
		"/api/senders":              {},
		"/api/sender/save": {"from_name": {"Shop"}, "from_email": {"shop@example.com"}, "reply_to_email": {"r@example.com"}, "country_id": {"840"},
			"company_address": {"1 Main St"}, "nickname": {"shop"}},
		"/api/sender/update": {"sender_id": {"{sender}"}, "from_name": {"Shop"}, "from_email": {"{sender_email}"}, "reply_to_email": {"r@example.com"},
			"country_id": {"840"}, "company_address": {"1 Main St"}, "nickname": {"shop"}},
		"/api/segment/store": {"contact_type_id": {"{ctype}"}, "segment_name": {"S"}, "select_field[0]": {"email"}, "select_operator[0]": {"in"},
			"value[0]": {"a@example.com|b@example.com"}, "query_type": {"or"}},
		"/api/segment/update": {"segment_id": {"{segment}"}, "segment_name": {"S2"}, "select_field[]": {"first_name", "company"},
			"select_operator[]": {"contains", "is_not_empty"}, "value[]": {"a", ""}},
		"/api/segment/email/store": {"segment_id": {"{segment}"}, "first_name": {"F"}, "last_name": {"L"}, "email": {"seg@example.com"}},
		"/api/single/send/create": {"template_id": {"1"}, "template_html": {`<p>Hi ((first_name)) <a href="https://example.com/x">x</a></p>`},
			"sender_id": {"{sender}"}, "unsubscribe_group_id": {"{group}"}, "single_send_name": {"N"}, "subject": {"S"}, "preheader": {"P"},
			"recipient_id[]": {"contacts_" + "{ctype}", "segments_" + "{segment}"}, "schedule_type": {"1"}, "schedule_date": {future}, "schedule_time": {"10:00"}},
		"/api/single/send/duplicate": {"utr": {"{send}"}},
		"/api/single/send/update": {"utr": {"{send}"}, "template_id": {"2"}, "sender_id": {"{sender}"}, "unsubscribe_group_id": {"{group}"},
			"single_send_name": {"N"}, "subject": {"S"}, "preheader": {"P"}, "recipient_id[0]": {"contacts_" + "{ctype}"},
			"exclude_specific_recipient_id[0]": {"segments_" + "{segment}"}, "schedule_type": {"1"}, "schedule_date": {future}, "schedule_time": {"10:00:00"}},
		"/api/single/send/bulk-delete": {"strIds[]": {"{send}"}},
		"/api/automations/create": {"type": {"welcome"}, "automation_for": {"contacts_" + "{ctype}"}, "automation_name": {"A"},
			"unsubscribe_group_id": {"{group}"}, "exit_criteria": {"2"}},
		"/api/automations/bulk-delete": {"strIds[]": {"{automation}"}},
		"/api/automations/schedule/create": {"utr": {"{automation}"}, "sender_id": {"{sender}"}, "subject": {"S"}, "waiting_period": {"2"},
			"waiting_type": {"days"}, "template_id": {"3"}, "preview_img": {"03.png"}},
	}
	if err := fx.refresh(); err != nil {
		f.Fatal(err)
	}
	return fx
}

// refresh makes the caller's records anew (after a request deleted some)
// and points the good values and bodies at them.
func (fx *fuzzApp) refresh() error {
	gen := fx.gen
	fx.gen++ // a failed attempt's names are not tried again
	v, err := fuzzRecords(fx.svc, fx.acct, gen)
	if err != nil {
		return err
	}
	v["gen"] = strconv.Itoa(gen)
	fx.good = map[string]string{}
	for path, kind := range fx.kind {
		fx.good[path] = v[kind]
	}
	var pairs []string
	for k, val := range v {
		pairs = append(pairs, "{"+k+"}", val, "%7B"+k+"%7D", val) // as written, and URL-encoded
	}
	fx.vals = strings.NewReplacer(pairs...)
	return nil
}

// fuzzRecords makes a record of every kind in the account (the gen-th
// time: names that must be unique carry it) and returns their ids and
// utrs by kind.
func fuzzRecords(svc *service.Service, acct int64, gen int) (map[string]string, error) {
	ctx := context.Background()
	var err error
	must := func(e error) {
		if err == nil && e != nil {
			err = e
		}
	}
	id := func(n int64) string { return strconv.FormatInt(n, 10) }
	g := strconv.Itoa(gen)
	v := map[string]string{"country": "840"}
	ct, e := svc.ContactTypes.Create(ctx, acct, "Customers "+g)
	if e != nil {
		return nil, e
	}
	v["ctype"] = id(ct.ID)
	if gen == 0 {
		_, e = svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "company", FieldType: "text"})
		must(e)
	}
	if fl, e := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "joined" + g, FieldType: "datetime-local"}); e == nil {
		v["field"] = id(fl.ID)
	} else {
		must(e)
	}
	for i, addr := range []string{"ann@example.com", "bob@example.org", "cy@example.net"} {
		c, e := svc.Contacts.Create(ctx, acct, service.ContactInput{ContactTypeID: v["ctype"], Email: addr, FirstName: "F" + id(int64(i)), Country: "840",
			Custom: map[string]string{"company": "Acme"}})
		if must(e); e == nil {
			v["contact"] = id(c.ID)
		}
	}
	seg, e := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: v["ctype"], SegmentName: "Org " + g, SelectField: []string{"email"},
		SelectOperator: []string{"ends_with"}, Value: []string{"example.org"}})
	if e != nil {
		return nil, e
	}
	v["segment"] = id(seg.ID)
	se, e := svc.Segments.AddEmail(ctx, acct, service.SegmentEmailInput{SegmentID: v["segment"], FirstName: "S", LastName: "E", Email: "se@example.com"})
	if must(e); e == nil {
		v["segment_email"] = id(se.ID)
	}
	grp, e := svc.Groups.Create(ctx, acct, service.GroupInput{GroupName: "News " + g, Description: "Monthly", IsDisplay: "1"})
	if e != nil {
		return nil, e
	}
	v["group"] = id(grp.ID)
	_, e = svc.Groups.AddRecipients(ctx, acct, service.RecipientsInput{GroupID: v["group"], EmailAddress: "left" + g + "@example.com"})
	must(e)
	var rid, uid int64
	must(svc.DB.R.Table("unsubscribers").Select("MAX(id)").Where("user_id = ? AND unsubscribe_groups_id = ?", acct, grp.ID).Scan(&rid).Error)
	v["recipient"] = id(rid)
	_, e = svc.Unsubscribers.Add(ctx, acct, "gone"+g+"@example.com")
	must(e)
	must(svc.DB.R.Table("unsubscribers").Select("MAX(id)").Where("user_id = ? AND unsubscribe_groups_id IS NULL", acct).Scan(&uid).Error)
	v["unsubscriber"] = id(uid)
	if n, e := svc.Notifications.Save(ctx, acct, service.NotificationInput{EmailAddress: "ops" + g + "@example.com", EmailOwner: "Ops"}); e == nil {
		v["notification"] = id(n.ID)
	} else {
		must(e)
	}
	// The first sender is saved and verified as a person would; later ones
	// (after the fuzzer deleted it) are written verified, since the
	// verification mails of an account are limited (decisions.md 8).
	snd := &models.Sender{UserID: acct, FromName: "Shop", FromEmail: "news" + g + "@shop.example.com", ReplyToEmail: "help@shop.example.com",
		CountryID: 250, CompanyAddress: "1 rue de Rivoli", Nickname: "shop" + g, IsVerified: 1, Utr: "fz" + id(acct) + "x" + g, VerifyToken: "fuzz-" + id(acct) + "-" + g,
		CreatedAt: models.NewTimestamp(models.Now()), UpdatedAt: models.NewTimestamp(models.Now())}
	if gen == 0 {
		if snd, e = svc.Senders.Create(ctx, acct, service.SenderInput{FromName: snd.FromName, FromEmail: snd.FromEmail, ReplyToEmail: snd.ReplyToEmail,
			CountryID: "250", CompanyAddress: snd.CompanyAddress, Nickname: snd.Nickname}); e != nil {
			return nil, e
		}
		if _, e := svc.Senders.Verify(ctx, snd.VerifyToken); e != nil {
			return nil, e
		}
	} else if e := svc.DB.W.Create(snd).Error; e != nil {
		return nil, e
	}
	v["sender"], v["sender_email"] = id(snd.ID), snd.FromEmail
	ss, e := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{TemplateID: "2", SenderID: v["sender"], UnsubscribeGroupID: v["group"],
		SingleSendName: "Spring", Subject: "Hi", Preheader: "P", RecipientID: []string{"contacts_" + v["ctype"]}, ScheduleType: "1",
		ScheduleDate: time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02"), ScheduleTime: "10:00"})
	if e != nil {
		return nil, e
	}
	v["send"] = ss.Utr
	a, e := svc.Automations.Create(ctx, acct, service.AutomationInput{Type: "custom", AutomationFor: "contacts_" + v["ctype"], UnsubscribeGroupID: v["group"]})
	if e != nil {
		return nil, e
	}
	_, e = svc.Automations.AddSchedule(ctx, acct, service.ScheduleInput{Utr: a.Utr, SenderID: v["sender"], Subject: "Welcome", WaitingPeriod: "0",
		WaitingType: "instantly", TemplateID: "5", PreviewImg: "05-welcome.png"})
	must(e)
	v["automation"] = a.Utr
	return v, err
}

// fuzzIDs are the kinds of value put in a route's record parameter.
func (fx *fuzzApp) idValue(path string, id uint8) string {
	switch id % 12 {
	case 0:
		return fx.good[path]
	case 1:
		return fx.foreign[path]
	case 2:
		return ""
	case 3:
		return "0"
	case 4:
		return "-1"
	case 5:
		return "abc"
	case 6:
		return "99999999999999999999"
	case 7:
		return "\xff\xfe"
	case 8:
		return strings.Repeat("9", 3000)
	case 9:
		return "1 OR 1=1; DROP TABLE users --"
	case 10:
		return fx.good[path] + "\x00"
	}
	return " " + fx.good[path] + " "
}

// fuzzRequest is one request as bytes on the wire.
type fuzzRequest struct {
	method, target string
	raw            []byte
}

// build turns the fuzzer's values into a well-framed HTTP/1.1 request
// (the framing is fasthttp's business; what is inside is the fuzzer's).
func (fx *fuzzApp) build(m, route, enc, hdr, id uint8, big uint16, query string, body []byte, extra string) fuzzRequest {
	body, query, extra = []byte(fx.vals.Replace(string(body))), fx.vals.Replace(query), fx.vals.Replace(extra)
	method := fuzzMethods[int(m)%len(fuzzMethods)]
	path := fx.routes[int(route)%len(fx.routes)]
	if m&0x80 != 0 && extra != "" {
		path += "/" + escapeTarget(extra)
	}
	q := escapeTarget(query)
	if key := fx.key[path]; key != "" && id&0x80 == 0 {
		q = joinQuery(q, url.QueryEscape(key)+"="+escapeTarget(fx.idValue(path, id)))
	}
	headers := [][2]string{{"Host", "herald.test"}}
	if hdr&1 != 0 {
		headers = append(headers, [2]string{"PublicKey", fx.keys.PublicKey})
	}
	if hdr&2 != 0 {
		headers = append(headers, [2]string{"SecretKey", fx.keys.SecretKey})
	}
	if hdr&4 != 0 { // wrong keys
		for i := range headers {
			if headers[i][0] == "PublicKey" || headers[i][0] == "SecretKey" {
				headers[i][1] = headers[i][1][:len(headers[i][1])/2] + "x"
			}
		}
	}
	if hdr&8 != 0 { // invalid UTF-8 and a tab in the keys
		headers = append(headers, [2]string{"PublicKey", "\xff\xfe\tkey"}, [2]string{"SecretKey", "\xc3\x28"})
	}
	if hdr&32 != 0 {
		headers = append(headers, [2]string{"X-Forwarded-For", "1.2.3.4, \xff, ::1"}, [2]string{"HX-Request", "true"},
			[2]string{"Accept", "text/html"}, [2]string{"Accept-Encoding", "gzip, br"})
	}
	if hdr&128 != 0 { // one header over the read buffer
		headers = append(headers, [2]string{"X-Big", strings.Repeat("h", 9000)})
	}

	// The body, in the encoding chosen.
	var ct string
	switch enc % 8 {
	case 0: // none
		body = nil
	case 1:
		ct = "application/x-www-form-urlencoded"
	case 2:
		ct = "application/json"
	case 3:
		body, ct = toMultipart(body, path, extra)
	case 4:
		ct = "text/plain"
	case 5:
		ct = "multipart/form-data" // without a boundary
	case 6:
		ct = "application/json; charset=\xff"
	case 7:
		ct = "application/x-www-form-urlencoded; charset=iso-8859-1"
	}
	if big != 0 {
		body, q = grow(big, enc%8, body, q, extra)
	}
	if ct != "" {
		headers = append(headers, [2]string{"Content-Type", ct})
	}
	if hdr&16 == 0 || len(body) == 0 {
		headers = append(headers, [2]string{"Content-Length", strconv.Itoa(len(body))})
	} else {
		headers = append(headers, [2]string{"Transfer-Encoding", "chunked"})
		var b bytes.Buffer
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 1+int(hdr)*97)
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, rest[:n])
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
		body = b.Bytes()
	}
	if hdr&64 != 0 {
		headers = append(headers, [2]string{"Connection", "close"})
	}
	target := path
	if q != "" {
		target += "?" + q
	}
	var b bytes.Buffer
	b.WriteString(method + " " + target + " HTTP/1.1\r\n")
	for _, h := range headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return fuzzRequest{method: method, target: target, raw: b.Bytes()}
}

// escapeTarget keeps what the fuzzer wrote in a request target, bytes
// over 0x7f (invalid UTF-8) included, except what would break the
// request line: spaces, controls and '#' are percent-encoded.
func escapeTarget(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c == 0x7f || c == '#' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func joinQuery(a, b string) string {
	if a == "" {
		return b
	}
	return a + "&" + b
}

// toMultipart turns a URL-encoded body into multipart form data (and a
// CSV file part from extra for the upload); anything else is sent as is
// with a boundary it may not hold.
func toMultipart(body []byte, path, extra string) ([]byte, string) {
	vals, err := url.ParseQuery(string(body))
	if err != nil {
		return body, "multipart/form-data; boundary=fuzz"
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	_ = w.SetBoundary("herald-fuzz-boundary")
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range vals[k] {
			_ = w.WriteField(k, v)
		}
	}
	if path == "/api/contacts/upload-csv" || extra != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="c.csv"`)
		h.Set("Content-Type", "text/csv")
		if p, err := w.CreatePart(h); err == nil {
			csv := extra
			if csv == "" {
				csv = "email,first_name,country\nup@example.com,Up,840\n"
			}
			_, _ = p.Write([]byte(csv))
		}
	}
	_ = w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// grow adds a huge value: a long string, many array items, a deeply
// nested document, or a long query string.
func grow(big uint16, enc uint8, body []byte, q, extra string) ([]byte, string) {
	n := int(big >> 2)
	name := extra
	if name == "" || len(name) > 64 {
		name = "strIds"
	}
	switch big & 3 {
	case 0: // a long value: up to about 1 MB
		long := strings.Repeat("x\u00e9", n*32)
		if enc == 2 {
			return jsonWith(body, name, long), q
		}
		return append(append(body, "&"+url.QueryEscape(name)+"="...), long...), q
	case 1: // many array items: up to 32,766
		if enc == 2 {
			items := make([]string, n*2)
			for i := range items {
				items[i] = strconv.Itoa(i + 1)
			}
			return jsonWith(body, name, items), q
		}
		var b bytes.Buffer
		b.Write(body)
		for i := 0; i < n*2; i++ {
			fmt.Fprintf(&b, "&%s[]=%d", url.QueryEscape(name), i+1)
		}
		return b.Bytes(), q
	case 2: // deep nesting: up to 131,064 levels
		d := n * 8
		if enc == 2 {
			return []byte(`{"` + name + `":` + strings.Repeat("[", d) + strings.Repeat("]", d) + `}`), q
		}
		return append(body, "&"+name+strings.Repeat("[a]", d/8)+"=1"...), q
	}
	// A long query string: up to about 1 MB, past every read buffer.
	return body, joinQuery(q, "q="+strings.Repeat("%C3%A9", n*10))
}

func jsonWith(body []byte, key string, v any) []byte {
	var obj map[string]any
	if json.Unmarshal(body, &obj) != nil || obj == nil {
		obj = map[string]any{}
	}
	obj[key] = v
	b, _ := json.Marshal(obj)
	return b
}

// fuzzConn is a connection whose reads are one request and whose writes
// are kept: fasthttp serves it as app.Test does.
type fuzzConn struct {
	r *bytes.Reader
	w bytes.Buffer
}

func (c *fuzzConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *fuzzConn) Write(b []byte) (int, error) { return c.w.Write(b) }
func (c *fuzzConn) Close() error                { return nil }
func (c *fuzzConn) LocalAddr() net.Addr         { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }
func (c *fuzzConn) RemoteAddr() net.Addr {
	return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (c *fuzzConn) SetDeadline(time.Time) error      { return nil }
func (c *fuzzConn) SetReadDeadline(time.Time) error  { return nil }
func (c *fuzzConn) SetWriteDeadline(time.Time) error { return nil }

// leaks are what an answer must never show: a stack, a source path, SQL
// or the database's own words.
var leaks = []string{"goroutine ", "runtime error", "runtime/", ".go:", "panic", "SQLSTATE", "sqlite", "SQL logic", "pq: ", "gorm", "SELECT ",
	"INSERT ", "UPDATE ", "DELETE FROM", "syntax error", "no such table", "constraint failed", "duplicate key", "violates", "/herald/"}

// check serves req and checks the answer.
func (fx *fuzzApp) check(t *testing.T, req fuzzRequest) {
	t.Helper()
	conn := &fuzzConn{r: bytes.NewReader(req.raw)}
	_ = fx.app.Server().ServeConn(conn) // its error is the end of the request bytes
	resp, err := http.ReadResponse(bufio.NewReader(&conn.w), &http.Request{Method: req.method})
	if err != nil {
		t.Fatalf("%s %.200q: no HTTP answer (%v): %.300q", req.method, req.target, err, conn.w.Bytes())
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	// Only answers fasthttp routed to an /api/ path are the API's: the
	// path as the server sees it (decoded, with dot segments resolved).
	var u fasthttp.URI
	if err := u.Parse(nil, []byte(req.target)); err != nil {
		return
	}
	path := string(u.Path())
	api := strings.HasPrefix(path, "/api/") || path == "/api"
	if !api {
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %.200q: %d %.200s", req.method, req.target, resp.StatusCode, body)
		}
		return
	}
	where := fmt.Sprintf("%s %.300q", req.method, req.target)
	if resp.StatusCode == 200 && strings.Contains(path, "delete") {
		// A record of the fixture may be gone: make them anew, so later
		// inputs still reach records that exist.
		defer func() {
			if err := fx.refresh(); err != nil {
				t.Fatalf("records: %v", err)
			}
		}()
	}
	if resp.StatusCode >= 500 {
		t.Fatalf("%s: server error %d: %.200s\nrequest: %.300q", where, resp.StatusCode, body, req.raw)
	}
	ctype := resp.Header.Get("Content-Type")
	if fuzzCSV[path] && resp.StatusCode == 200 {
		if !strings.HasPrefix(ctype, "text/csv") {
			t.Fatalf("%s: CSV answered as %q", where, ctype)
		}
		return
	}
	if !strings.HasPrefix(ctype, "application/json") {
		t.Fatalf("%s: %d answered as %q, not JSON: %.200s\nrequest: %.300q", where, resp.StatusCode, ctype, body, req.raw)
	}
	if req.method == "HEAD" {
		return
	}
	if path == "/api/openapi.json" && resp.StatusCode == 200 {
		// The API's document (decisions.md 9), not an answer of it.
		var doc struct {
			OpenAPI string `json:"openapi"`
		}
		if err := json.Unmarshal(body, &doc); err != nil || doc.OpenAPI != "3.1.0" {
			t.Fatalf("%s: the OpenAPI document is %.200s", where, body)
		}
		return
	}
	var env struct {
		Status  string          `json:"status"`
		Message json.RawMessage `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("%s: %d, not a JSON object (%v): %.200s", where, resp.StatusCode, err, body)
	}
	switch {
	case env.Status == "success" && resp.StatusCode == 200 && (len(env.Message) > 0 || len(env.Errors) > 0):
	case env.Status == "failed" && resp.StatusCode >= 400 && len(env.Errors) > 0 && string(env.Errors) != "null":
		for _, l := range leaks {
			if strings.Contains(string(body), l) && !bytes.Contains(req.raw, []byte(l)) {
				t.Fatalf("%s: %d answer shows %q: %.1000s", where, resp.StatusCode, l, body)
			}
		}
	default:
		t.Fatalf("%s: %d is not the envelope: %.200s", where, resp.StatusCode, body)
	}
}

// seeds are the deterministic corpus `go test` runs: every route with
// every method and id kind, every POST route's good body in every
// encoding, with each header variant and each kind of huge value.
func (fx *fuzzApp) seeds() []fuzzSeed {
	var out []fuzzSeed
	for r, path := range fx.routes {
		for m := range fuzzMethods {
			out = append(out, fuzzSeed{method: uint8(m), route: uint8(r), hdr: 3})
		}
		if fx.key[path] != "" {
			for id := 1; id < 12; id++ {
				out = append(out, fuzzSeed{method: uint8(methodOf(fx, path)), route: uint8(r), hdr: 3, id: uint8(id)})
			}
		}
		body, ok := fx.bodies[path]
		if !ok {
			continue
		}
		form := []byte(body.Encode())
		js := formJSON(body)
		for enc := uint8(1); enc < 8; enc++ {
			b := form
			if enc == 2 || enc == 6 {
				b = js
			}
			out = append(out, fuzzSeed{method: 1, route: uint8(r), enc: enc, hdr: 3, body: b})
		}
		for _, hdr := range []uint8{0, 1, 2, 3 | 4, 3 | 8, 3 | 16, 3 | 32, 3 | 64, 3 | 128} {
			out = append(out, fuzzSeed{method: 1, route: uint8(r), enc: 1, hdr: hdr, body: form})
		}
		for _, big := range []uint16{4 << 2, 16383 << 2, 16383<<2 | 1, 5000<<2 | 1, 2000<<2 | 2, 16383<<2 | 2, 16383<<2 | 3} {
			out = append(out, fuzzSeed{method: 1, route: uint8(r), enc: 1, hdr: 3, big: big, body: form},
				fuzzSeed{method: 1, route: uint8(r), enc: 2, hdr: 3, big: big, body: js})
		}
		// Invalid UTF-8 and controls in every value.
		bad := url.Values{}
		for k, vs := range body {
			for _, v := range vs {
				bad.Add(k, v+"\xff\xfe\r\n\x00")
			}
		}
		// NUL is valid UTF-8, but PostgreSQL's text cannot hold it: in one
		// value at a time, so that the others pass.
		for k := range body {
			nul := url.Values{}
			for k2, vs := range body {
				nul[k2] = append([]string(nil), vs...)
			}
			nul[k][0] += "\x00"
			out = append(out, fuzzSeed{method: 1, route: uint8(r), enc: 1, hdr: 3, body: []byte(nul.Encode())},
				fuzzSeed{method: 1, route: uint8(r), enc: 2, hdr: 3, body: formJSON(nul)})
		}
		out = append(out, fuzzSeed{method: 1, route: uint8(r), enc: 1, hdr: 3, body: []byte(bad.Encode())},
			fuzzSeed{method: 1, route: uint8(r), enc: 2, hdr: 3, body: []byte(`{"x":"\xff\xfe"}`)},
			fuzzSeed{method: 1, route: uint8(r), enc: 2, hdr: 3, body: []byte(`{"x":`)},
			fuzzSeed{method: 1, route: uint8(r), enc: 2, hdr: 3, body: []byte(`[1,2]`)},
			fuzzSeed{method: 1, route: uint8(r), enc: 3, hdr: 3, body: []byte("%zz"), extra: "email\n\xff@x\n"},
			fuzzSeed{method: 1, route: uint8(r), enc: 3, hdr: 3, body: form, extra: "email,first_name,custom_field\nnul@example.com,A\x00B,\x00\n\x00,\n"})
	}
	// Query strings and paths: invalid UTF-8, encodings, long ones.
	for r := range fx.routes {
		out = append(out, fuzzSeed{route: uint8(r), hdr: 3, query: "search=%ff&page=-1&per_page=99999999999&q=\xff"},
			fuzzSeed{route: uint8(r), hdr: 3, query: "search=a%00b&page=2&per_page=1"},
			fuzzSeed{method: 0x80, route: uint8(r), hdr: 3, extra: "..%2f..%2fmetrics"})
	}
	return out
}

// methodOf is the index of the method a route answers (GET unless it
// only takes another).
func methodOf(fx *fuzzApp, path string) int {
	for _, r := range fx.app.GetRoutes(true) {
		if r.Path == path && r.Method != "HEAD" {
			for i, m := range fuzzMethods {
				if m == r.Method {
					return i
				}
			}
		}
	}
	return 0
}

// formJSON is a form as a JSON object: indexed and [] arrays as arrays,
// name[key] as objects.
func formJSON(v url.Values) []byte {
	obj := map[string]any{}
	for k, vs := range v {
		if i := strings.IndexByte(k, '['); i > 0 {
			name, inner := k[:i], strings.TrimSuffix(k[i+1:], "]")
			if _, err := strconv.Atoi(inner); err == nil || inner == "" {
				arr, _ := obj[name].([]any)
				for _, s := range vs {
					arr = append(arr, s)
				}
				obj[name] = arr
				continue
			}
			m, _ := obj[name].(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			m[inner] = vs[0]
			obj[name] = m
			continue
		}
		obj[k] = vs[0]
	}
	b, _ := json.Marshal(obj)
	return b
}

func httptestRequest(method, target string) *http.Request {
	r, _ := http.NewRequest(method, "http://herald.test"+target, nil)
	return r
}
