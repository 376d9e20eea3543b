package engine_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"herald/models"
	"herald/service"
	"herald/service/audience"
	"herald/service/core"
	"herald/service/deliverability"
	"herald/service/engine"
	"herald/service/identity"
	"herald/service/internal/record"
)

// BenchmarkABTestSend measures the cost of an A/B subject test
// on SQLite against a plain send of the same audience: the resolution
// pass that splits the audience (4 variants on 10 %), the decision that
// counts the test rows by variant and releases the rest, and how even the
// split is. Run it once per size:
//
//	go test -run '^$' -bench ABTestSend -benchtime 1x ./service/
//
// HERALD_BENCH_SIZES (default "100000,1000000") lists the audience sizes.
func BenchmarkABTestSend(b *testing.B) {
	for _, n := range benchSizes(b) {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				benchABTest(b, n)
			}
		})
	}
}

func benchABTest(b *testing.B, n int) {
	ctx := context.Background()
	db, err := core.OpenDB(filepath.Join(b.TempDir(), "herald.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	svc, err := service.New(db, service.Config{PasswordCost: bcrypt.MinCost})
	if err != nil {
		b.Fatal(err)
	}
	u, _, err := svc.Accounts.Create(ctx, identity.AccountInput{Name: "B", Email: "bench@herald.test", Password: "bench-passphrase-9"})
	if err != nil {
		b.Fatal(err)
	}
	acct := u.ID
	snd, err := svc.Senders.Create(ctx, acct, deliverability.SenderInput{FromName: "Shop", FromEmail: "news@shop.example.com",
		ReplyToEmail: "help@shop.example.com", CountryID: "250", CompanyAddress: "1 rue de Rivoli", Nickname: "shop"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		b.Fatal(err)
	}
	g, err := svc.Groups.Create(ctx, acct, audience.GroupInput{GroupName: "News", Description: "News", IsDisplay: "1"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct, audience.FieldInput{FieldName: "tz", FieldType: "text"}); err != nil {
		b.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, acct, "Everyone")
	if err != nil {
		b.Fatal(err)
	}
	benchContacts(b, db, acct, ct.ID, n)
	newSend := func(name string, ab *service.ABTestInput) *models.SingleSend {
		ss, err := svc.SingleSends.Create(ctx, acct, service.SingleSendInput{
			TemplateID: "1", TemplateHTML: `<html><body><p>Hello</p><a href="((unsubscribe_preferences))">Preferences</a></body></html>`,
			SenderID: strconv.FormatInt(snd.ID, 10), UnsubscribeGroupID: strconv.FormatInt(g.ID, 10),
			SingleSendName: name, Subject: "Hi", Preheader: "News", ScheduleType: "0",
			RecipientID: []string{"contacts_" + strconv.FormatInt(ct.ID, 10)}, AB: ab,
		})
		if err != nil {
			b.Fatal(err)
		}
		if err := db.W.Exec("UPDATE single_sends SET armed = 0 WHERE id = ?", ss.ID).Error; err != nil {
			b.Fatal(err)
		}
		return ss
	}
	sg, err := svc.NewSending(ctx, service.SendingConfig{})
	if err != nil {
		b.Fatal(err)
	}
	aud := sg
	resolve := func(ss *models.SingleSend) (cpu, wall time.Duration) {
		c0, w0 := cpuTime(), time.Now()
		if err := engine.Resolve(ctx, aud, ss.ID); err != nil {
			b.Fatal(err)
		}
		return cpuTime() - c0, time.Since(w0)
	}
	plain := newSend("Plain", nil)
	pc, pw := resolve(plain)
	ab := newSend("AB", &service.ABTestInput{On: true, Subjects: []string{"A", "B", "C", "D"}, Share: "10", Metric: record.ABOpens, Wait: "60"})
	ac, aw := resolve(ab)
	var counts []struct{ Variant, N int64 }
	db.R.Raw("SELECT variant, COUNT(*) AS n FROM send_messages WHERE send_id = ? GROUP BY variant ORDER BY variant", ab.ID).Scan(&counts)
	// The decision: count the test rows by variant, release the rest.
	c0, w0 := cpuTime(), time.Now()
	won, err := engine.DecideTest(ctx, db, ab.ID, time.Now())
	if err != nil || won != 1 {
		b.Fatalf("decision: winner %d, %v", won, err)
	}
	dc, dw := cpuTime()-c0, time.Since(w0)
	var held int64
	db.R.Raw("SELECT COUNT(*) FROM send_messages WHERE send_id = ? AND next_at = ?", ab.ID, record.HeldBack).Scan(&held)
	if held != 0 {
		b.Fatalf("%d rows still held", held)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(pc), "plain-cpu-ms")
	b.ReportMetric(ms(ac), "ab-cpu-ms")
	b.ReportMetric(ms(dw), "decide-ms")
	b.Logf("n=%d plain: cpu %v wall %v; A/B: cpu %v wall %v (%.2fx cpu); split by variant (0 = held) %v; decision: cpu %v wall %v",
		n, pc.Round(time.Millisecond), pw.Round(time.Millisecond), ac.Round(time.Millisecond), aw.Round(time.Millisecond),
		float64(ac)/float64(pc), counts, dc.Round(time.Millisecond), dw.Round(time.Millisecond))
}
