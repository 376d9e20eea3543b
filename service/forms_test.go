package service_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
	"herald/smtptest"
)

// formsFix is two herald processes sharing one database, mailing through
// one SMTP sink, on a clock the test moves.
type formsFix struct {
	ctx    context.Context
	svc    *service.Service // the first process
	other  *service.Service // the second
	smtp   *smtptest.Server
	clock  *dbtest.Clock
	acct   int64
	typeID int64
	groupA int64 // offered by the test forms
	groupB int64
}

const (
	personUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
	scannerUA = "Mozilla/5.0 (compatible; Barracuda Sentinel link protection)"
)

func newFormsFix(t *testing.T, limits service.FormLimits) *formsFix {
	t.Helper()
	f := &formsFix{ctx: context.Background(), smtp: smtptest.Start(t), clock: dbtest.NewClock(time.Now())}
	tr, err := delivery.OpenTransport(f.smtp.URL(), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	ps := dbtest.Processes(t, 2, service.Config{Transport: tr, BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test",
		Now: f.clock.Now, FormLimits: limits, EventWebhooksPrivate: true})
	f.svc, f.other = ps[0], ps[1]
	f.acct = servicetest.NewAccount(t, f.svc, "owner@herald.test")
	ct, err := f.svc.ContactTypes.Create(f.ctx, f.acct, "Newsletter readers")
	if err != nil {
		t.Fatal(err)
	}
	f.typeID = ct.ID
	if _, err := f.svc.Fields.Create(f.ctx, f.acct, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]*int64{"News": &f.groupA, "Offers": &f.groupB} {
		grp, err := f.svc.Groups.Create(f.ctx, f.acct, service.GroupInput{GroupName: name, Description: "d", IsDisplay: "1"})
		if err != nil {
			t.Fatal(err)
		}
		*g = grp.ID
	}
	return f
}

func (f *formsFix) form(t *testing.T, double string) *models.Form {
	t.Helper()
	fm, err := f.svc.Forms.Save(f.ctx, f.acct, service.FormInput{Name: "Weekly news", ContactTypeID: idStr(f.typeID), DoubleOptIn: double,
		Fields: []string{"company"}, GroupIDs: []string{idStr(f.groupA), idStr(f.groupB)}, Language: "de"})
	if err != nil {
		t.Fatal(err)
	}
	return fm
}

func idStr(id int64) string { return strconv.FormatInt(id, 10) }

func (f *formsFix) contact(t *testing.T, email string) *models.Contact {
	t.Helper()
	var c models.Contact
	if err := f.svc.DB.R.Where("user_id = ? AND email = ? AND deleted_at IS NULL", f.acct, email).First(&c).Error; err != nil {
		t.Fatalf("contact %s: %v", email, err)
	}
	return &c
}

func person(ip string) service.SignupInput {
	return service.SignupInput{IP: ip, UserAgent: personUA}
}

var confirmLink = regexp.MustCompile(`http://herald\.test/c/([A-Za-z0-9_-]+)`)

// tokensTo are the confirmation tokens mailed to rcpt, oldest first.
func (f *formsFix) tokensTo(rcpt string) []string {
	var out []string
	for _, m := range f.smtp.Messages() {
		if m.To != rcpt {
			continue
		}
		body := bytes.ReplaceAll(m.Data, []byte("=\r\n"), nil)
		if sm := confirmLink.FindSubmatch(body); sm != nil {
			out = append(out, string(sm[1]))
		}
	}
	return out
}

func hit(method, ua string) delivery.Hit {
	return delivery.Hit{Method: method, UserAgent: ua, IP: netip.MustParseAddr("203.0.113.9")}
}

func TestFormsSaveUpdateDeleteScoped(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "")
	if fm.DoubleOptIn != 1 || len(fm.PublicID) != 16 || fm.Language != "de" {
		t.Fatalf("saved form %+v", fm)
	}
	other := servicetest.NewAccount(t, f.svc, "other@herald.test")
	otherType, err := f.svc.ContactTypes.Create(f.ctx, other, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	otherGroup, err := f.svc.Groups.Create(f.ctx, other, service.GroupInput{GroupName: "Theirs", Description: "d", IsDisplay: "1"})
	if err != nil {
		t.Fatal(err)
	}
	base := service.FormInput{Name: "Sign up", ContactTypeID: idStr(f.typeID)}
	for _, tc := range []struct {
		name  string
		edit  func(*service.FormInput)
		field string // "" : not found
	}{
		{"no name", func(in *service.FormInput) { in.Name = "" }, "name"},
		{"name with a line break", func(in *service.FormInput) { in.Name = "a\r\nBcc: x" }, "name"},
		{"no contact type", func(in *service.FormInput) { in.ContactTypeID = "" }, "contact_type_id"},
		{"their contact type", func(in *service.FormInput) { in.ContactTypeID = idStr(otherType.ID) }, ""},
		{"their group", func(in *service.FormInput) { in.GroupIDs = []string{idStr(otherGroup.ID)} }, ""},
		{"a group that is no id", func(in *service.FormInput) { in.GroupIDs = []string{"x"} }, ""},
		{"an unknown field", func(in *service.FormInput) { in.Fields = []string{"nope"} }, "fields"},
		{"javascript redirect", func(in *service.FormInput) { in.RedirectURL = "javascript:alert(1)" }, "redirect_url"},
		{"ftp redirect", func(in *service.FormInput) { in.RedirectURL = "ftp://example.com/" }, "redirect_url"},
		{"relative redirect", func(in *service.FormInput) { in.RedirectURL = "/thanks" }, "redirect_url"},
		{"bad double opt-in", func(in *service.FormInput) { in.DoubleOptIn = "2" }, "double_opt_in"},
		{"bad language", func(in *service.FormInput) { in.Language = "not a language" }, "language"},
	} {
		in := base
		tc.edit(&in)
		_, err := f.svc.Forms.Save(f.ctx, f.acct, in)
		if tc.field == "" {
			if !service.IsNotFound(err) {
				t.Errorf("%s: %v, want not found", tc.name, err)
			}
			continue
		}
		se, ok := err.(*service.Error)
		if !ok || se.Code != service.CodeValidation || len(se.Fields[tc.field]) == 0 {
			t.Errorf("%s: %v, want a problem of %s", tc.name, err, tc.field)
		}
	}
	up := base
	up.ID, up.Name, up.DoubleOptIn, up.RedirectURL = idStr(fm.ID), "Renamed", "0", "https://shop.example.com/thanks"
	got, err := f.svc.Forms.Update(f.ctx, f.acct, up)
	if err != nil {
		t.Fatal(err)
	}
	if got.PublicID != fm.PublicID || got.DoubleOptIn != 0 || got.Name != "Renamed" {
		t.Fatalf("updated %+v", got)
	}
	if _, err := f.svc.Forms.Update(f.ctx, other, up); !service.IsNotFound(err) {
		t.Fatalf("update by another account: %v", err)
	}
	if err := f.svc.Forms.Delete(f.ctx, other, fm.ID); !service.IsNotFound(err) {
		t.Fatalf("delete by another account: %v", err)
	}
	var names []string
	if err := f.svc.Forms.Each(f.ctx, f.acct, service.ListFilter{}, func(x *models.Form) error { names = append(names, x.Name); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[0] != "Renamed" {
		t.Fatalf("list %v", names)
	}
	if err := f.svc.Forms.Delete(f.ctx, f.acct, fm.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Forms.Public(f.ctx, fm.PublicID); !service.IsNotFound(err) {
		t.Fatalf("deleted form still public: %v", err)
	}
}

func TestFormDoubleOptInConfirmsOnAPersonsClickOnly(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "1")
	in := person("198.51.100.7")
	in.Email, in.FirstName, in.Custom, in.Groups = "Ann@Example.com", "Ann", map[string]string{"company": "Acme", "unknown": "x"}, []string{idStr(f.groupA)}
	res, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Message != "Check your inbox to confirm." {
		t.Fatalf("answer %q", res.Message)
	}
	c := f.contact(t, "ann@example.com")
	if c.Status != models.ContactUnconfirmed || c.Consent.Source != "form" || c.Consent.FormID != fm.ID || c.Consent.IP != "198.51.100.7" ||
		c.Consent.UserAgent != personUA || c.Consent.Text != service.ConsentText(service.FormPageLocale(fm, ""), fm) || !strings.HasPrefix(c.Consent.Text, "Mit Ihrer Anmeldung") || c.Consent.At == nil || c.Consent.ConfirmedAt != nil || c.Language != "de" {
		t.Fatalf("new contact %+v", c)
	}
	if !f.smtp.WaitCount(1, 5*time.Second) {
		t.Fatal("no confirmation mail")
	}
	toks := f.tokensTo("ann@example.com")
	if len(toks) != 1 {
		t.Fatalf("tokens %v", toks)
	}
	// The token is kept hashed only.
	var clear int64
	f.svc.DB.R.Model(&models.FormConfirmation{}).Where("token_hash = ?", toks[0]).Count(&clear)
	if clear != 0 {
		t.Fatal("the token is stored in clear")
	}
	// Machines see the Confirm button and confirm nothing: a HEAD, a
	// scanner's agent, and a GET within seconds of the mail (a gateway's
	// prefetch).
	for _, h := range []delivery.Hit{hit("HEAD", personUA), hit("GET", scannerUA), hit("GET", ""), hit("GET", personUA)} {
		r, err := f.other.Forms.Confirm(f.ctx, toks[0], false, h)
		if err != nil || r.State != service.ConfirmAsk {
			t.Fatalf("%+v: %v %+v, want the button", h, err, r)
		}
	}
	if c := f.contact(t, "ann@example.com"); c.Status != models.ContactUnconfirmed {
		t.Fatalf("a machine confirmed: %+v", c)
	}
	f.clock.Advance(time.Minute)
	// A person's click on the second process confirms; the first sees it.
	r, err := f.other.Forms.Confirm(f.ctx, toks[0], false, hit("GET", personUA))
	if err != nil || r.State != service.Confirmed {
		t.Fatalf("person's click: %v %+v", err, r)
	}
	c = f.contact(t, "ann@example.com")
	if c.Status != models.ContactConfirmed || c.Consent.ConfirmedAt == nil {
		t.Fatalf("confirmed contact %+v", c)
	}
	// The chosen group is left, the other offered one joined.
	var inA, inB int64
	f.svc.DB.R.Model(&models.Unsubscriber{}).Where("unsubscribe_groups_id = ? AND email_address = ?", f.groupA, "ann@example.com").Count(&inA)
	f.svc.DB.R.Model(&models.Unsubscriber{}).Where("unsubscribe_groups_id = ? AND email_address = ?", f.groupB, "ann@example.com").Count(&inB)
	if inA != 0 || inB != 1 {
		t.Fatalf("group recipients: chosen %d, not chosen %d", inA, inB)
	}
	// Following the link again changes nothing and says so.
	if r, err := f.svc.Forms.Confirm(f.ctx, toks[0], true, hit("POST", scannerUA)); err != nil || r.State != service.Confirmed {
		t.Fatalf("again: %v %+v", err, r)
	}
	if _, err := f.svc.Forms.Confirm(f.ctx, "nope", false, hit("GET", personUA)); !service.IsNotFound(err) {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestFormConfirmByPostAndExpiry(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "1")
	for _, email := range []string{"post@example.com", "late@example.com"} {
		in := person("198.51.100.8")
		in.Email = email
		if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
			t.Fatal(err)
		}
	}
	f.smtp.WaitCount(2, 5*time.Second)
	// A POST confirms whoever sends it, at once.
	if r, err := f.svc.Forms.Confirm(f.ctx, f.tokensTo("post@example.com")[0], true, hit("POST", scannerUA)); err != nil || r.State != service.Confirmed {
		t.Fatalf("post: %v %+v", err, r)
	}
	if c := f.contact(t, "post@example.com"); c.Status != models.ContactConfirmed {
		t.Fatalf("post did not confirm: %+v", c)
	}
	f.clock.Advance(service.ConfirmValidFor + time.Minute)
	r, err := f.svc.Forms.Confirm(f.ctx, f.tokensTo("late@example.com")[0], true, hit("POST", personUA))
	if err != nil || r.State != service.ConfirmExpired {
		t.Fatalf("expired: %v %+v", err, r)
	}
	if c := f.contact(t, "late@example.com"); c.Status != models.ContactUnconfirmed {
		t.Fatalf("an expired link confirmed: %+v", c)
	}
}

func TestFormResendLimitAndKnownAddresses(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "1")
	in := person("198.51.100.9")
	in.Email = "bob@example.com"
	first, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in)
	if err != nil {
		t.Fatal(err)
	}
	f.smtp.WaitCount(1, 5*time.Second)
	// Again at once: the same answer, no second mail.
	again, err := f.other.Forms.Submit(f.ctx, fm.PublicID, in)
	if err != nil || again.Message != first.Message {
		t.Fatalf("again: %v %+v", err, again)
	}
	f.clock.Advance(service.ResendAfter - time.Second)
	if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // a mail that should not come has time to arrive
	if n := len(f.tokensTo("bob@example.com")); n != 1 {
		t.Fatalf("%d mails within 10 minutes", n)
	}
	f.clock.Advance(2 * time.Second)
	if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
		t.Fatal(err)
	}
	if !f.smtp.WaitCount(2, 5*time.Second) || len(f.tokensTo("bob@example.com")) != 2 {
		t.Fatal("no second mail after 10 minutes")
	}
	// Once confirmed, a sign-up answers the same and mails nothing.
	f.clock.Advance(time.Minute)
	if _, err := f.svc.Forms.Confirm(f.ctx, f.tokensTo("bob@example.com")[1], false, hit("GET", personUA)); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour)
	in.FirstName = "Mallory"
	known, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in)
	if err != nil || known.Message != first.Message {
		t.Fatalf("known address: %v %+v", err, known)
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(f.tokensTo("bob@example.com")); n != 2 {
		t.Fatalf("a known address was mailed again (%d)", n)
	}
	if c := f.contact(t, "bob@example.com"); c.FirstName != "" || c.Status != models.ContactConfirmed {
		t.Fatalf("a stranger's post changed the contact: %+v", c)
	}
	// Confirmed in one contact type, the address confirms again for another.
	ct2, err := f.svc.ContactTypes.Create(f.ctx, f.acct, "Customers")
	if err != nil {
		t.Fatal(err)
	}
	fm2, err := f.svc.Forms.Save(f.ctx, f.acct, service.FormInput{Name: "Customers", ContactTypeID: idStr(ct2.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Forms.Submit(f.ctx, fm2.PublicID, in); err != nil {
		t.Fatal(err)
	}
	if !f.smtp.WaitCount(3, 5*time.Second) {
		t.Fatal("no confirmation for the second contact type")
	}
	var c2 models.Contact
	f.svc.DB.R.Where("contact_type_id = ? AND email = ?", ct2.ID, "bob@example.com").First(&c2)
	if c2.Status != models.ContactUnconfirmed {
		t.Fatalf("second type's contact %+v", c2)
	}
}

func TestFormSingleOptInAndBots(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "0")
	in := person("198.51.100.10")
	in.Email, in.Groups = "cy@example.com", []string{idStr(f.groupB)}
	res, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, in)
	if err != nil || res.Message != "Subscribed." {
		t.Fatalf("single: %v %+v", err, res)
	}
	if c := f.contact(t, "cy@example.com"); c.Status != models.ContactConfirmed || c.Consent.Source != "form" {
		t.Fatalf("single contact %+v", c)
	}
	var inA int64
	f.svc.DB.R.Model(&models.Unsubscriber{}).Where("unsubscribe_groups_id = ? AND email_address = ?", f.groupA, "cy@example.com").Count(&inA)
	if inA != 1 {
		t.Fatal("the group not chosen was not joined at once")
	}
	// The hidden field: the same answer, nothing stored.
	bot := person("198.51.100.11")
	bot.Email, bot.Website = "bot@example.com", "http://spam.example"
	if res, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, bot); err != nil || res.Message != "Subscribed." {
		t.Fatalf("honeypot: %v %+v", err, res)
	}
	var n int64
	f.svc.DB.R.Model(&models.Contact{}).Where("email = ?", "bot@example.com").Count(&n)
	if n != 0 {
		t.Fatal("a bot's post was stored")
	}
	// The signed time field: refused under 2 s, and when forged.
	stamp, err := f.svc.Forms.Stamp(f.ctx, fm.PublicID)
	if err != nil {
		t.Fatal(err)
	}
	fast := person("198.51.100.12")
	fast.Email, fast.Stamp = "fast@example.com", stamp
	f.clock.Advance(time.Second)
	if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, fast); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("too fast: %v", err)
	}
	f.clock.Advance(1500 * time.Millisecond)
	forged := fast
	forged.Stamp = stamp[:len(stamp)-1] + "0"
	if stamp[len(stamp)-1] == '0' {
		forged.Stamp = stamp[:len(stamp)-1] + "1"
	}
	if _, err := f.other.Forms.Submit(f.ctx, fm.PublicID, forged); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("forged: %v", err)
	}
	if _, err := f.other.Forms.Submit(f.ctx, fm.PublicID, fast); err != nil {
		t.Fatalf("after 2 s: %v", err)
	}
	// Bad input is refused with field problems, and never stored.
	for _, bad := range []service.SignupInput{
		{Email: "not-an-address"},
		{Email: "x@example.com", FirstName: "a\nb"},
		{Email: "x@example.com", Custom: map[string]string{"company": "a\x00b"}},
		{Email: "x@example.com", Custom: map[string]string{"company": "a\rb"}},
	} {
		bad.IP = "198.51.100.13"
		if _, err := f.svc.Forms.Submit(f.ctx, fm.PublicID, bad); service.ErrorCode(err) != service.CodeValidation {
			t.Errorf("%+v: %v", bad, err)
		}
	}
	if _, err := f.svc.Forms.Submit(f.ctx, "nope", in); !service.IsNotFound(err) {
		t.Fatalf("unknown form: %v", err)
	}
}

func TestFormLimitsAcrossProcesses(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{PerIP: 3, PerForm: 5, Window: time.Minute})
	fm := f.form(t, "0")
	f.clock.Set(f.clock.Now().Truncate(time.Minute).Add(time.Second))
	post := func(svc *service.Service, ip string, i int) error {
		in := person(ip)
		in.Email = "p" + strconv.Itoa(i) + "@example.com"
		_, err := svc.Forms.Submit(f.ctx, fm.PublicID, in)
		return err
	}
	// One address: three posts over both processes, then 429.
	for i := range 3 {
		if err := post([]*service.Service{f.svc, f.other}[i%2], "192.0.2.1", i); err != nil {
			t.Fatal(err)
		}
	}
	err := post(f.other, "192.0.2.1", 3)
	if se, ok := err.(*service.Error); !ok || se.Code != service.CodeRateLimited || se.RetryAfter <= 0 || se.RetryAfter > time.Minute {
		t.Fatalf("fourth from one address: %#v", err)
	}
	// The refused address did not use up the form: two others still may.
	for i, ip := range []string{"192.0.2.2", "192.0.2.3"} {
		if err := post(f.svc, ip, 10+i); err != nil {
			t.Fatalf("another address: %v", err)
		}
	}
	if err := post(f.svc, "192.0.2.4", 20); service.ErrorCode(err) != service.CodeRateLimited {
		t.Fatalf("sixth post to the form: %v", err)
	}
	// A new window starts afresh.
	f.clock.Advance(time.Minute)
	if err := post(f.other, "192.0.2.1", 30); err != nil {
		t.Fatalf("next window: %v", err)
	}
}

// TestFormSignupLiftsAnErasure: an address erased at the person's request
// is refused by contacts/add, yet a fresh sign-up through a form works and
// lifts the erasure.
func TestFormSignupLiftsAnErasure(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	fm := f.form(t, "0")
	if err := f.svc.Privacy.Erase(f.ctx, f.acct, "gone@example.com"); err != nil {
		t.Fatal(err)
	}
	if erased, err := f.svc.Privacy.Erased(f.ctx, f.acct, "gone@example.com"); err != nil || !erased {
		t.Fatalf("erased: %v %v", erased, err)
	}
	in := person("198.51.100.20")
	in.Email = "gone@example.com"
	if _, err := f.other.Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
		t.Fatal(err)
	}
	if c := f.contact(t, "gone@example.com"); c.Status != models.ContactConfirmed {
		t.Fatalf("contact %+v", c)
	}
	if erased, err := f.svc.Privacy.Erased(f.ctx, f.acct, "gone@example.com"); err != nil || erased {
		t.Fatalf("still erased: %v %v", erased, err)
	}
}

// TestFormSignupAndConfirmAcrossProcesses: a sign-up taken by one process
// and confirmed through the other (and the reverse) is seen at once by
// both: the contact's status and consent read through either process's
// Contacts, and the subscribe then confirm events written once each, even
// when a person's click reaches both processes at the same moment.
func TestFormSignupAndConfirmAcrossProcesses(t *testing.T) {
	t.Parallel()
	f := newFormsFix(t, service.FormLimits{})
	// The endpoint is saved before either process reads which accounts
	// want events (each keeps that list for up to two seconds).
	if _, err := f.svc.EventWebhooks.Save(f.ctx, f.acct, service.EventWebhookInput{URL: "https://hooks.example/forms", Events: []string{"subscribe", "confirm"}}); err != nil {
		t.Fatal(err)
	}
	fm := f.form(t, "1")
	procs := map[string]*service.Service{"first": f.svc, "second": f.other}
	status := func(email string) map[string]models.ContactView {
		t.Helper()
		id := f.contact(t, email).ID
		out := map[string]models.ContactView{}
		for name, p := range procs {
			v, err := p.Contacts.Get(f.ctx, f.acct, id)
			if err != nil {
				t.Fatalf("%s process reads %s: %v", name, email, err)
			}
			out[name] = *v
		}
		return out
	}
	events := func(email string) []string {
		t.Helper()
		var kinds []string
		if err := f.other.DB.R.Model(&models.Event{}).Where("user_id = ? AND email = ?", f.acct, email).Order("id").Pluck("kind", &kinds).Error; err != nil {
			t.Fatal(err)
		}
		return kinds
	}
	type signup struct {
		email         string
		takes, clicks []string // the processes that take the post and the person's click(s)
	}
	cases := []signup{
		{"ann@example.com", []string{"first"}, []string{"second"}},
		{"bob@example.com", []string{"second"}, []string{"first"}},
	}
	// Double clicks reaching both processes at once, a few times over so
	// that their transactions do overlap.
	for i := range 8 {
		cases = append(cases, signup{"double" + strconv.Itoa(i) + "@example.com", []string{"first"}, []string{"first", "second", "first", "second"}})
	}
	for i, tc := range cases {
		in := person("198.51.100." + strconv.Itoa(40+i))
		in.Email = tc.email
		if _, err := procs[tc.takes[0]].Forms.Submit(f.ctx, fm.PublicID, in); err != nil {
			t.Fatal(err)
		}
		for name, v := range status(tc.email) {
			if v.Status != models.ContactUnconfirmed || v.Consent.Source != models.ConsentForm || v.Consent.FormID != fm.ID || v.Consent.ConfirmedAt != nil {
				t.Fatalf("%s after the sign-up, read by the %s process: %+v", tc.email, name, v.Contact)
			}
		}
		if got := events(tc.email); !slices.Equal(got, []string{"subscribe"}) {
			t.Fatalf("%s: events after the sign-up %v", tc.email, got)
		}
		if !f.smtp.WaitCount(i+1, 5*time.Second) {
			t.Fatalf("%s: no confirmation mail", tc.email)
		}
		toks := f.tokensTo(tc.email)
		if len(toks) != 1 {
			t.Fatalf("%s: tokens %v", tc.email, toks)
		}
		f.clock.Advance(time.Minute) // past the window in which a click is a gateway's scan
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, len(tc.clicks))
		for j, name := range tc.clicks {
			wg.Go(func() {
				<-start
				r, err := procs[name].Forms.Confirm(f.ctx, toks[0], false, hit("GET", personUA))
				if err == nil && r.State != service.Confirmed {
					err = fmt.Errorf("state %v", r.State)
				}
				errs[j] = err
			})
		}
		close(start)
		wg.Wait()
		for j, err := range errs {
			if err != nil {
				t.Fatalf("%s: the click on the %s process: %v", tc.email, tc.clicks[j], err)
			}
		}
		for name, v := range status(tc.email) {
			if v.Status != models.ContactConfirmed || v.Consent.ConfirmedAt == nil {
				t.Fatalf("%s after the click, read by the %s process: %+v", tc.email, name, v.Contact)
			}
		}
		if got := events(tc.email); !slices.Equal(got, []string{"subscribe", "confirm"}) {
			t.Fatalf("%s: events after the click %v, want subscribe then confirm once", tc.email, got)
		}
		// Following the link again on the process that took the post adds nothing.
		if r, err := procs[tc.takes[0]].Forms.Confirm(f.ctx, toks[0], true, hit("POST", personUA)); err != nil || r.State != service.Confirmed {
			t.Fatalf("%s again: %v %+v", tc.email, err, r)
		}
		if got := events(tc.email); len(got) != 2 {
			t.Fatalf("%s: events after a second click %v", tc.email, got)
		}
	}
}
