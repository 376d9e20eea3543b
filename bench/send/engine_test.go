package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"herald/bench/harness"
	"herald/delivery"
	"herald/service"
)

// discard is a transport that takes every message and keeps nothing.
type discard struct{}

func (discard) Send(context.Context, string, []string, []byte) error { return nil }
func (discard) Close() error                                         { return nil }

// BenchmarkEngineStages runs the sending engine's stages one after the
// other in this process, with no SMTP and no concurrency, so that each
// stage's cost per message is measured alone: resolving the audience into
// the ledger (one send of 20,000 contacts, timed once per send), claiming
// (Sending.Claim, 64 at a time, as the engine asks), building (each job's
// Build: render, MIME, quoted-printable) and recording (Sending.Record, 20
// outcomes per group commit, the engine's most with 10 connections; the
// engine's commits hold whatever outcomes wait, so the sub-benchmarks with
// 1 and 5 show what smaller commits cost). The database is an SQLite file,
// or a fresh schema of HERALD_BENCH_DATABASE.
// Run it with -cpuprofile to see inside a stage:
//
//	go test -run '^$' -bench EngineStages -benchtime 40000x ./bench/send
func BenchmarkEngineStages(b *testing.B) {
	// One database for the sub-benchmarks and their repeated calls: each
	// call makes sends of the same 20,000 contacts.
	ctx := context.Background()
	dsn := filepath.Join(b.TempDir(), "herald.db")
	if base := os.Getenv("HERALD_BENCH_DATABASE"); base != "" {
		var drop func()
		var err error
		if dsn, drop, err = harness.FreshSchema(base); err != nil {
			b.Fatal(err)
		}
		defer drop()
	}
	const contacts = 20_000
	f, err := prepare(ctx, dsn, contacts, false)
	if err != nil {
		b.Fatal(err)
	}
	db, err := service.OpenDB(dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	svc, err := service.New(db, service.Config{Transport: discard{}, BaseURL: "https://mail.cafe-zoe.example.com", SystemFrom: "no-reply@cafe-zoe.example.com"})
	if err != nil {
		b.Fatal(err)
	}
	sg, err := svc.NewSending(ctx, service.SendingConfig{Conns: 10})
	if err != nil {
		b.Fatal(err)
	}
	// The scheduler keeps the heartbeat (claims built without one are
	// stale) and resolves the audiences; the benchmark drives the ledger.
	schedCtx, stop := context.WithCancel(ctx)
	defer stop()
	go sg.Scheduler.Run(schedCtx)
	sends := 0
	for _, commit := range []int{20, 5, 1} {
		b.Run("commit="+strconv.Itoa(commit), func(b *testing.B) { engineStages(b, svc, sg, f, commit, &sends) })
	}
}

func engineStages(b *testing.B, svc *service.Service, sg *service.Sending, f *fixture, commit int, sends *int) {
	ctx := context.Background()
	var resolve time.Duration
	var resolved int64
	newSend := func(n int) {
		b.StopTimer()
		defer b.StartTimer()
		ss, err := svc.SingleSends.Create(ctx, f.account, service.SingleSendInput{
			TemplateID: "2", SenderID: strconv.FormatInt(f.sender, 10), UnsubscribeGroupID: strconv.FormatInt(f.group, 10),
			SingleSendName: "Stages " + strconv.Itoa(n), Subject: "((first_name)), our November news",
			Preheader:   "Chestnut tart, new beans and our winter hours, ((first_name))",
			RecipientID: []string{"contacts_" + strconv.FormatInt(f.audience, 10)}, ScheduleType: "0",
		})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := sg.Tick(ctx); err != nil { // starts the resolution in the background
			b.Fatal(err)
		}
		for {
			got, err := svc.SingleSends.Get(ctx, f.account, ss.Utr)
			if err != nil {
				b.Fatal(err)
			}
			if got.Resolved == 1 {
				resolve += time.Since(t0)
				resolved += got.Triggered
				return
			}
			time.Sleep(time.Millisecond)
		}
	}

	var claim, build, record time.Duration
	var size int64
	var jobs []*delivery.Job
	outs := make([]delivery.Outcome, 0, commit)
	flush := func() {
		t := time.Now()
		if err := sg.Ledger.Record(ctx, outs); err != nil {
			b.Fatal(err)
		}
		record += time.Since(t)
		outs = outs[:0]
	}
	*sends++
	newSend(*sends)
	b.ResetTimer()
	for range b.N {
		for len(jobs) == 0 {
			t := time.Now()
			got, err := sg.Ledger.Claim(ctx, 64)
			claim += time.Since(t)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) == 0 {
				*sends++
				newSend(*sends)
				continue
			}
			jobs = got
		}
		j := jobs[0]
		jobs = jobs[1:]
		t := time.Now()
		raw, err := j.Build()
		build += time.Since(t)
		if err != nil {
			b.Fatal(err)
		}
		size += int64(len(raw))
		outs = append(outs, delivery.Outcome{Job: j})
		if len(outs) == cap(outs) {
			flush()
		}
	}
	if len(outs) > 0 {
		flush()
	}
	b.StopTimer()
	us := func(d time.Duration, n int64) float64 { return float64(d) / float64(time.Microsecond) / float64(n) }
	n := int64(b.N)
	b.ReportMetric(us(claim, n), "claim-µs/msg")
	b.ReportMetric(us(build, n), "build-µs/msg")
	b.ReportMetric(us(record, n), "record-µs/msg")
	b.ReportMetric(us(resolve, resolved), "resolve-µs/msg")
	b.ReportMetric(float64(size)/float64(n), "bytes/msg")
}
