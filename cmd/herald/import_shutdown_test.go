package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/eventually"
	"herald/models"
	"herald/service"
)

// withService opens the server's database for the test, apart from it.
func withService(t *testing.T, dsn string, f func(svc *service.Service)) {
	t.Helper()
	cfg, err := loadConfig(envFrom(map[string]string{"HERALD_DATABASE": dsn}))
	if err != nil {
		t.Fatal(err)
	}
	db, err := openDB(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f(newService(t, db, service.Config{}))
}

// Stopping herald while an API upload is importing an endless CSV cuts
// the import short: serve returns, and the import is recorded failed
// with the shutdown's message, never left "running".
func TestServeStopsImportUnderWay(t *testing.T) {
	t.Parallel()
	dsn := dbtest.DSN(t)
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"herald", "account", "create", "--email", "imp@example.com", "--password", "test-passphrase-9", "--name", "Imp"}, envFrom(map[string]string{"HERALD_DATABASE": dsn, "HERALD_LOG_LEVEL": "error"}), &out); err != nil {
		t.Fatal(err)
	}
	var keys keysOut
	if err := json.Unmarshal(out.Bytes(), &keys); err != nil {
		t.Fatal(err)
	}
	var typeID int64
	withService(t, dsn, func(svc *service.Service) {
		ct, err := svc.ContactTypes.Create(ctx, keys.UserID, "Type")
		if err != nil {
			t.Fatal(err)
		}
		typeID = ct.ID
	})
	base, stop := startServer(t, map[string]string{"HERALD_DATABASE": dsn, "HERALD_API_RATE": "0"})

	// An upload whose CSV never ends (until the test stops writing).
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.CloseWithError(io.ErrClosedPipe) })
	mw := multipart.NewWriter(pw)
	go func() {
		_ = mw.WriteField("contact_type_id", fmt.Sprint(typeID))
		fw, _ := mw.CreateFormFile("file", "endless.csv")
		bw := bufio.NewWriter(fw)
		bw.WriteString("email,first_name\n")
		for i := 0; ; i++ {
			if _, err := fmt.Fprintf(bw, "endless%09d@example.com,N%d\n", i, i); err != nil {
				return
			}
		}
	}()
	answered := make(chan struct{})
	answer := make(chan string, 1) // when the client read one
	go func() {
		defer close(answered)
		req, _ := http.NewRequest("POST", base+"/api/contacts/upload-csv", pr)
		req.Header.Set("PublicKey", keys.PublicKey)
		req.Header.Set("SecretKey", keys.SecretKey)
		req.Header.Set("Content-Type", mw.FormDataContentType())
		if resp, err := http.DefaultClient.Do(req); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answer <- fmt.Sprintf("%d %s", resp.StatusCode, b)
		}
	}()

	// Wait for the import to have committed rows.
	running := func() (imp models.Import) {
		withService(t, dsn, func(svc *service.Service) {
			if got, err := svc.Imports.Recent(ctx, keys.UserID, 1); err == nil && len(got) == 1 {
				imp = got[0]
			}
		})
		return imp
	}
	eventually.NoError(t, time.Minute, func() error {
		if imp := running(); imp.Status == "running" && imp.Created > 0 {
			return nil
		}
		return fmt.Errorf("the import did not get under way: %+v", running())
	})
	// Stop: the import is cut short while the HTTP server drains (the
	// client, still sending, holds its connection until it stops).
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	var imp models.Import
	eventually.NoError(t, time.Minute, func() error {
		if imp = running(); imp.Status != "running" {
			return nil
		}
		return fmt.Errorf("the import still runs after stop: %+v", imp)
	})
	pw.CloseWithError(io.ErrClosedPipe)
	<-answered
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if imp.Status != "failed" || imp.FinishedAt == nil || !strings.Contains(imp.Message, "herald was stopped") {
		t.Fatalf("import after stop: status %q, finished %v, message %q", imp.Status, imp.FinishedAt, imp.Message)
	}
	select {
	case a := <-answer: // 503 in the envelope, when the answer got through
		if !strings.HasPrefix(a, "503 ") || !strings.Contains(a, "herald was stopped") {
			t.Fatalf("answer to the cut upload: %.300s", a)
		}
	default:
		t.Log("the client read no answer (the connection closed first)")
	}
}
