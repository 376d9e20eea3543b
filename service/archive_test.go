package service_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// archiveContact is the one recipient of the archive tests' sends: every
// value of it is distinctive, so that none may appear in an archived copy.
var archiveContact = struct{ first, last, email, code, city string }{
	"Zephyrine", "Quackenbush", "zephyrine.q@private.example", "SECRET-CODE-4711", "Xanthoville",
}

// archiveDesign uses the contact's placeholders, a custom field, the
// unsubscribe and view-in-browser links and a tracked link.
const archiveDesign = `<html><body><p>Hello ((first_name)) ((last_name)) &lt;((email))&gt; of ((city))!</p>` +
	`<p>Your code: ((code))</p><a href="https://shop.example.com/sale?who=((email))">Sale</a>` +
	`<p>((sender_name)), ((sender_address))</p>` +
	`<a href="((view_in_browser))">View in browser</a> <a class="u" href="((unsubscribe_preferences))"><span>Unsubscribe</span></a>` +
	`<p>Preferences: ((unsubscribe_preferences))</p></body></html>`

// archiveFixture is an account with the archive contact, the custom field
// code, and a type to send to.
func archiveFixture(t *testing.T) (*servicetest.SendFixture, string) {
	f := servicetest.NewSendFixture(t, true)
	if _, err := f.Svc.Fields.Create(f.Ctx, f.Acct, service.FieldInput{FieldName: "code", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	ct, err := f.Svc.ContactTypes.Create(f.Ctx, f.Acct, "Readers")
	if err != nil {
		t.Fatal(err)
	}
	c := archiveContact
	if _, err := f.Svc.Contacts.Create(f.Ctx, f.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10),
		FirstName: c.first, LastName: c.last, Email: c.email, Country: "250", City: c.city, Custom: map[string]string{"code": c.code}}); err != nil {
		t.Fatal(err)
	}
	return f, "contacts_" + strconv.FormatInt(ct.ID, 10)
}

func archiveInput(f *servicetest.SendFixture, name, to, archive string) service.SingleSendInput {
	in := f.Input(name, []string{to}, nil)
	in.TemplateHTML, in.Subject, in.Preheader, in.Archive = archiveDesign, name+" for ((first_name))", "Read it, ((first_name))", archive
	return in
}

func TestArchiveFlagRoundTrip(t *testing.T) {
	t.Parallel()
	f, to := archiveFixture(t)
	later := func(in service.SingleSendInput) service.SingleSendInput {
		in.ScheduleType, in.ScheduleDate, in.ScheduleTime = "1", f.Now().Add(72*time.Hour).Format("2006-01-02"), "10:00"
		return in
	}
	on := f.Create(later(archiveInput(f, "On", to, "1")))
	if got := f.Get(on.Utr); got.Archive != 1 {
		t.Fatalf("created with archive=1: %d", got.Archive)
	}
	off := f.Create(later(archiveInput(f, "Off", to, "")))
	if got := f.Get(off.Utr); got.Archive != 0 {
		t.Fatalf("created without archive: %d", got.Archive)
	}
	// Update: not given keeps it, 0 and 1 set it.
	for _, step := range []struct {
		give string
		want int
	}{{"", 1}, {"0", 0}, {"true", 1}} {
		in := later(archiveInput(f, "On", to, step.give))
		in.Utr = on.Utr
		if _, err := f.Svc.SingleSends.Update(f.Ctx, f.Acct, in); err != nil {
			t.Fatal(err)
		}
		if got := f.Get(on.Utr); got.Archive != step.want {
			t.Fatalf("update with archive %q: %d, want %d", step.give, got.Archive, step.want)
		}
	}
	_, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, later(archiveInput(f, "Bad", to, "maybe")))
	var se *service.Error
	if !errors.As(err, &se) || len(se.Fields["archive"]) == 0 {
		t.Fatalf("archive=maybe: %v", err)
	}
	// A duplicate keeps the flag.
	cp, err := f.Svc.SingleSends.Duplicate(f.Ctx, f.Acct, on.Utr)
	if err != nil || f.Get(cp.Utr).Archive != 1 {
		t.Fatalf("duplicate: %v", err)
	}
}

func TestArchiveListsOnlyArchivedSentSendsOfItsAccount(t *testing.T) {
	t.Parallel()
	f, to := archiveFixture(t)
	ctx := f.Ctx
	archived := f.Create(archiveInput(f, "Archived", to, "1"))
	plain := f.Create(archiveInput(f, "Plain", to, "0"))
	f.WaitStatus(archived.Utr, models.SendCompleted, 20*time.Second)
	f.WaitStatus(plain.Utr, models.SendCompleted, 20*time.Second)
	waiting := archiveInput(f, "Waiting", to, "1")
	waiting.ScheduleType, waiting.ScheduleDate, waiting.ScheduleTime = "1", f.Now().Add(72*time.Hour).Format("2006-01-02"), "10:00"
	scheduled := f.Create(waiting)

	pub, err := f.Svc.Archive.PublicID(ctx, f.Acct)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := f.Svc.Archive.PublicID(ctx, f.Acct); again != pub {
		t.Fatalf("public id changed: %q then %q", pub, again)
	}
	if len(pub) < 22 || pub == strconv.FormatInt(f.Acct, 10) || strings.Contains(pub, strconv.FormatInt(f.Acct, 10)+"-") {
		t.Fatalf("public id %q is not a random id", pub)
	}
	url, err := f.Svc.Archive.URL(ctx, f.Acct)
	if err != nil || url != "http://herald.test/archive/"+pub {
		t.Fatalf("url %q, %v", url, err)
	}

	l, err := f.Svc.Archive.List(ctx, pub, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Entries) != 1 || l.Entries[0].Utr != archived.Utr || l.More {
		t.Fatalf("list: %+v", l.Entries)
	}
	e := l.Entries[0]
	if e.Subject != "Archived for" || e.Preheader != "Read it," || e.SenderName != "Shop" || e.SentAt.IsZero() || l.Title != "Shop" {
		t.Fatalf("entry: %+v, title %q", e, l.Title)
	}
	for _, utr := range []string{plain.Utr, scheduled.Utr, "no-such-utr"} {
		if _, err := f.Svc.Archive.Get(ctx, pub, utr); !service.IsNotFound(err) {
			t.Fatalf("send %s outside the archive: %v", utr, err)
		}
	}

	// A send marked after it was sent joins the archive, newest first.
	if err := f.Svc.Archive.SetArchive(ctx, f.Acct, plain.Utr, true); err != nil {
		t.Fatal(err)
	}
	if l, err = f.Svc.Archive.List(ctx, pub, 1); err != nil || len(l.Entries) != 2 || l.Entries[0].Utr != plain.Utr {
		t.Fatalf("after marking the plain send: %+v %v", l, err)
	}
	// A deleted send leaves it.
	if err := f.Svc.SingleSends.Delete(ctx, f.Acct, plain.Utr); err != nil {
		t.Fatal(err)
	}
	if l, _ = f.Svc.Archive.List(ctx, pub, 1); len(l.Entries) != 1 {
		t.Fatalf("deleted send still listed: %+v", l.Entries)
	}

	// Another account: its own archive only, and nothing of the first.
	o := f.SecondAccount("other@herald.test")
	oct, err := f.Svc.ContactTypes.Create(ctx, o.Acct, "Theirs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Contacts.Create(ctx, o.Acct, service.ContactInput{ContactTypeID: strconv.FormatInt(oct.ID, 10), FirstName: "O", Email: "o@other.example", Country: "250"}); err != nil {
		t.Fatal(err)
	}
	oin := archiveInput(o, "Theirs", "contacts_"+strconv.FormatInt(oct.ID, 10), "1")
	ossend, err := f.Svc.SingleSends.Create(ctx, o.Acct, oin)
	if err != nil {
		t.Fatal(err)
	}
	o.WaitStatus(ossend.Utr, models.SendCompleted, 20*time.Second)
	opub, err := f.Svc.Archive.PublicID(ctx, o.Acct)
	if err != nil || opub == pub {
		t.Fatalf("second account's public id %q (first %q): %v", opub, pub, err)
	}
	ol, err := f.Svc.Archive.List(ctx, opub, 1)
	if err != nil || len(ol.Entries) != 1 || ol.Entries[0].Utr != ossend.Utr || ol.Title != "Other" {
		t.Fatalf("second archive: %+v %v", ol, err)
	}
	if _, err := f.Svc.Archive.Get(ctx, pub, ossend.Utr); !service.IsNotFound(err) {
		t.Fatalf("another account's send through the first archive: %v", err)
	}
	if _, err := f.Svc.Archive.Get(ctx, opub, archived.Utr); !service.IsNotFound(err) {
		t.Fatalf("the first account's send through the second archive: %v", err)
	}
	if err := f.Svc.Archive.SetArchive(ctx, o.Acct, archived.Utr, false); !service.IsNotFound(err) {
		t.Fatalf("marking another account's send: %v", err)
	}
	for _, id := range []string{"", "nope", strconv.FormatInt(f.Acct, 10), strings.ToUpper(pub), pub + "x", "a\x00b"} {
		if _, err := f.Svc.Archive.List(ctx, id, 1); !service.IsNotFound(err) {
			t.Fatalf("unknown public id %q: %v", id, err)
		}
	}
}

// TestArchivedCopyHasNoRecipientData renders an archived send whose design
// uses every kind of contact placeholder and the unsubscribe link, and
// checks that none of the contact's values, no token and no tracking
// address is in it, while the real message carried them.
func TestArchivedCopyHasNoRecipientData(t *testing.T) {
	t.Parallel()
	f, to := archiveFixture(t)
	ss := f.Create(archiveInput(f, "Private", to, "1"))
	done := f.WaitStatus(ss.Utr, models.SendCompleted, 20*time.Second)
	sent := f.Sent(ss.Utr)
	if len(sent) != 1 {
		t.Fatalf("%d messages sent", len(sent))
	}
	raw := string(sent[0].Data)
	c := archiveContact
	for _, v := range []string{c.first, c.code} {
		if !strings.Contains(raw, v) {
			t.Fatalf("the real message lacks %q: the design does not exercise it", v)
		}
	}
	var row models.SendMessage
	if err := f.Svc.DB.R.Where("send_id = ?", done.ID).Take(&row).Error; err != nil {
		t.Fatal(err)
	}
	tok, err := f.Svc.Tracking.Token(f.Ctx, row.ID)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := f.Svc.Archive.PublicID(f.Ctx, f.Acct)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.Svc.Archive.Get(f.Ctx, pub, ss.Utr)
	if err != nil {
		t.Fatal(err)
	}
	all := a.HTML + a.Subject + a.Preheader + a.SenderName
	for _, bad := range []string{c.first, c.last, c.email, "zephyrine", c.code, c.city, tok, "/t/o/", "/t/c/", "/u/", "/m/", "((", "Unsubscribe", "__tk"} {
		if strings.Contains(all, bad) {
			t.Errorf("the archived copy holds %q:\n%s", bad, a.HTML)
		}
	}
	self := "http://herald.test/archive/" + pub + "/" + ss.Utr
	for _, want := range []string{`href="https://shop.example.com/sale?who="`, "Shop, 1 rue de Rivoli", `href="` + self + `"`, "Read it,"} {
		if !strings.Contains(a.HTML, want) {
			t.Errorf("the archived copy lacks %q:\n%s", want, a.HTML)
		}
	}
}
