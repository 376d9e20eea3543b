package service_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"herald/dbtest"
	"herald/service"
)

func TestZZImportPerf(t *testing.T) {
	if os.Getenv("ZZPERF") == "" {
		t.Skip()
	}
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := newAccount(t, svc, "p@example.com")
	ct, _ := svc.ContactTypes.Create(ctx, acct, "All")
	svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "age", FieldType: "number"})
	svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "company", FieldType: "text"})
	n, _ := strconv.Atoi(os.Getenv("ZZPERF"))
	pr, pw := io.Pipe()
	go func() {
		fmt.Fprintf(pw, "email,first_name,last_name,country,age,company\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(pw, "user%d@example.com,First%d,Last%d,US,%d,Company %d\n", i, i, i, i%90, i%1000)
		}
		pw.Close()
	}()
	imp, _ := svc.Imports.Start(ctx, acct, ct.ID, "x.csv", -1)
	start := time.Now()
	if err := svc.Imports.Run(ctx, imp, pr); err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d rows in %v: %.0f rows/s; created %d; heap sys %d MB", n, el, float64(n)/el.Seconds(), imp.Created, ms.HeapSys>>20)
	start = time.Now()
	seg, err := svc.Segments.Create(ctx, acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), SegmentName: "s",
		SelectField: []string{"age", "country", "first_name"}, SelectOperator: []string{"greater_than", "equals", "contains"}, Value: []string{"30", "US", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("segment %d materialised in %v", seg.ID, time.Since(start))
}
