package service_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// With no opens at all, the scheduler chooses the first variant (ties go
// to the first) and the rest gets its subject.
func TestABTestTieGoesToTheFirstVariant(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	var emails []string
	for i := range 12 {
		emails = append(emails, "t"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Tie", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"First", "Second"}, Share: "50", Metric: service.ABClicks, Wait: "30"}
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		ab, err := f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, got)
		if err != nil {
			t.Fatal(err)
		}
		if got.Resolved == 1 && ab.Variants[0].Delivered+ab.Variants[1].Delivered+ab.Held == 12 {
			held = ab.Held
			return nil
		}
		return fmt.Errorf("test share not sent: %+v", ab)
	})
	if held == 0 || held == 12 {
		t.Fatalf("held %d of 12", held)
	}
	f.Advance(31 * time.Minute)
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.Status == models.SendCompleted {
			if got.ABWinner != 1 || got.Delivered != 12 {
				t.Fatalf("winner %d delivered %d, want 1 and 12", got.ABWinner, got.Delivered)
			}
			return nil
		}
		return fmt.Errorf("not completed: status %d winner %d", got.Status, got.ABWinner)
	})
	n := 0
	for _, m := range f.SMTP.Messages() {
		if m.Header().Get("X-Herald-Send") == ss.Utr {
			n++
			if s := m.Header().Get("Subject"); s != "First" && s != "Second" {
				t.Errorf("subject %q", s)
			}
		}
	}
	if n != 12 {
		t.Fatalf("%d messages, want 12", n)
	}
	// A copy runs its own test.
	cp, err := f.Svc.SingleSends.Duplicate(f.Ctx, f.Acct, ss.Utr)
	if err != nil {
		t.Fatal(err)
	}
	if cp.ABWinner != 0 || cp.ABDecideAt != 0 || len(cp.ABSubjects) != 2 {
		t.Fatalf("copy: winner %d decide at %d subjects %v", cp.ABWinner, cp.ABDecideAt, cp.ABSubjects)
	}
	var second int64
	if err := f.Svc.DB.R.Raw("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND variant = 2 AND release_at > 0", ss.ID).Scan(&second).Error; err != nil || second != 0 {
		t.Fatalf("rest rows of variant 2: %d (%v)", second, err)
	}
}

// The option is validated: two to four subjects, a share of 5 to 50, a
// metric, a wait, and not with a local time.
func TestABTestOptionIsValidated(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com")
	in := f.Input("AB", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	ok := service.ABTestInput{On: true, Subjects: []string{"A", "B"}, Share: "20", Metric: "opens", Wait: "120"}
	for _, tc := range []struct {
		edit  func(*service.ABTestInput, *service.SingleSendInput)
		field string // "": valid
	}{
		{func(*service.ABTestInput, *service.SingleSendInput) {}, ""},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) { a.Subjects = []string{"A", " "} }, "ab_subjects"},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) {
			a.Subjects = []string{"A", "B", "C", "D", "E"}
		}, "ab_subjects"},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) { a.Share = "60" }, "ab_share"},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) { a.Share = "x" }, "ab_share"},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) { a.Metric = "bounces" }, "ab_metric"},
		{func(a *service.ABTestInput, _ *service.SingleSendInput) { a.Wait = "0" }, "ab_wait"},
		{func(_ *service.ABTestInput, s *service.SingleSendInput) {
			s.Local = &service.LocalTimeInput{On: true, Clock: "09:00"}
		}, "ab_test"},
	} {
		a, s := ok, in
		a.Subjects = slices.Clone(ok.Subjects)
		tc.edit(&a, &s)
		s.AB = &a
		ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, s)
		if tc.field == "" {
			if err != nil {
				t.Fatalf("valid option refused: %v", err)
			}
			if !slices.Equal(ss.ABSubjects, []string{"A", "B"}) || ss.ABShare != 20 || ss.ABWait != 120 {
				t.Fatalf("stored %+v", ss)
			}
			continue
		}
		var e *service.Error
		if !errors.As(err, &e) || !e.Problems().Has(tc.field) {
			t.Errorf("%s: got %v", tc.field, err)
		}
	}
}

// A release cut short (the winner chosen, then a crash before every held
// row was released) goes on at the next tick with the winner as stored,
// whatever the opens say now.
func TestABTestReleaseResumesWithTheStoredWinner(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	var emails []string
	for i := range 12 {
		emails = append(emails, "r"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Customers", emails...)
	in := f.Input("Resume", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"First", "Second"}, Share: "50", Metric: service.ABOpens, Wait: "30"}
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	var held int64
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		ab, err := f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, got)
		if err != nil {
			t.Fatal(err)
		}
		if got.Resolved == 1 && ab.Variants[0].Delivered+ab.Variants[1].Delivered+ab.Held == 12 {
			held = ab.Held
			return nil
		}
		return fmt.Errorf("test share not sent: %+v", ab)
	})
	// As a process that died after choosing the second variant and
	// releasing one held row leaves the send.
	if err := f.Svc.DB.W.Exec("UPDATE single_sends SET ab_winner = 2 WHERE id = ?", ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.DB.W.Exec("UPDATE send_messages SET variant = 2, next_at = 0, release_at = 1 WHERE id = (SELECT MIN(id) FROM send_messages WHERE send_id = ? AND variant = 0)", ss.ID).Error; err != nil {
		t.Fatal(err)
	}
	f.Advance(31 * time.Minute)
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.Status == models.SendCompleted {
			if got.ABWinner != 2 || got.ABReleased != 1 || got.Delivered != 12 {
				t.Fatalf("winner %d released %d delivered %d, want 2, 1 and 12", got.ABWinner, got.ABReleased, got.Delivered)
			}
			return nil
		}
		return fmt.Errorf("not completed: status %d winner %d", got.Status, got.ABWinner)
	})
	var second int64
	if err := f.Svc.DB.R.Raw("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND variant = 2 AND release_at > 0", ss.ID).Scan(&second).Error; err != nil || second != held {
		t.Fatalf("rest rows with the stored winner: %d of %d (%v)", second, held, err)
	}
	n := 0
	for _, m := range f.SMTP.Messages() {
		if m.Header().Get("X-Herald-Send") == ss.Utr {
			n++
		}
	}
	if n != 12 {
		t.Fatalf("%d messages, want 12", n)
	}
}

// A draft keeps its A/B option, saved and saved again.
func TestABTestDraftKeepsTheOption(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	typeA := f.ContactType("Customers", "ann@example.com")
	in := f.Input("Draft", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"A", "B", "C"}, Share: "30", Metric: service.ABClicks, Wait: "90"}
	d, err := f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.ABSubjects, []string{"A", "B", "C"}) || d.ABShare != 30 || d.ABMetric != service.ABClicks || d.ABWait != 90 {
		t.Fatalf("draft %v %d %q %d", d.ABSubjects, d.ABShare, d.ABMetric, d.ABWait)
	}
	in.Utr = d.Utr
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"X", "Y"}, Share: "10", Metric: service.ABOpens, Wait: "30"}
	d, err = f.Svc.SingleSends.SaveDraft(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.ABSubjects, []string{"X", "Y"}) || d.ABShare != 10 || d.ABMetric != service.ABOpens || d.ABWait != 30 {
		t.Fatalf("draft saved again %v %d %q %d", d.ABSubjects, d.ABShare, d.ABMetric, d.ABWait)
	}
}

// A privacy proxy that fetches every pixel of variant A does not choose
// the subject: the winner is the variant people opened (human unique
// opens), though A has more opens in all; the statistics show both.
func TestABTestWinnerByPeopleNotMachines(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, true)
	var emails []string
	for i := range 24 {
		emails = append(emails, "p"+strconv.Itoa(i)+"@example.com")
	}
	typeA := f.ContactType("Readers", emails...)
	in := f.Input("People", []string{"contacts_" + strconv.FormatInt(typeA, 10)}, nil)
	in.AB = &service.ABTestInput{On: true, Subjects: []string{"Proxied", "Read"}, Share: "50", Metric: service.ABOpens, Wait: "30"}
	ss, err := f.Svc.SingleSends.Create(f.Ctx, f.Acct, in)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID      int64
		Variant int
		State   models.MessageState
	}
	var rows []row
	eventually.NoError(t, 10*time.Second, func() error {
		rows = rows[:0]
		if err := f.Svc.DB.R.Raw("SELECT id, variant, state FROM send_messages WHERE send_id = ? AND variant > 0 ORDER BY id", ss.ID).Scan(&rows).Error; err != nil {
			t.Fatal(err)
		}
		delivered := 0
		for _, r := range rows {
			if r.State == models.MessageDelivered {
				delivered++
			}
		}
		if len(rows) > 0 && delivered == len(rows) {
			return nil
		}
		return fmt.Errorf("test share not delivered: %+v", rows)
	})
	var proxied, read int
	for _, r := range rows {
		tok, err := f.Svc.Tracking.Token(f.Ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case r.Variant == 1:
			if err := f.Svc.Tracking.OpenHit(f.Ctx, tok, appleProxyHit); err != nil {
				t.Fatal(err)
			}
			proxied++
		case r.Variant == 2 && read == 0:
			if err := f.Svc.Tracking.OpenHit(f.Ctx, tok, personHit); err != nil {
				t.Fatal(err)
			}
			read++
		}
	}
	if proxied < 2 || read != 1 {
		t.Fatalf("split: %d of A proxied, %d of B read; the test needs A to lead in all opens", proxied, read)
	}
	f.Advance(31 * time.Minute)
	eventually.NoError(t, 10*time.Second, func() error {
		got, _ := f.Svc.SingleSends.Get(f.Ctx, f.Acct, ss.Utr)
		if got.ABWinner != 0 {
			if got.ABWinner != 2 {
				t.Fatalf("winner %d, want 2 (the variant a person opened)", got.ABWinner)
			}
			ab, err := f.Svc.SingleSends.ABTest(f.Ctx, f.Acct, got)
			if err != nil {
				t.Fatal(err)
			}
			a, b := ab.Variants[0], ab.Variants[1]
			if a.UniqueOpens != int64(proxied) || a.HumanOpens != 0 || b.UniqueOpens != 1 || b.HumanOpens != 1 {
				t.Fatalf("figures A %+v B %+v; want A %d opens none human, B one human", a.VariantFigures, b.VariantFigures, proxied)
			}
			return nil
		}
		return fmt.Errorf("no winner: status %d", got.Status)
	})
}
