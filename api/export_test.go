package api_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/models"
	"herald/service"
	"herald/world"
)

func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v: %q", err, body)
	}
	return recs
}

func TestContactsExport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Leads")
	other := e.a.newType(t, "Partners")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "company", "field_type", "text")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "first_name", "Ann", "last_name", "Lee",
		"email", "ann@example.com", "country", "840", "city", "Los Angeles", "postal_code", "90001",
		"custom_field[age]", "31", "custom_field[company]", "Acme, Inc.")), "Contact Added Successfully")
	// Formula-looking values: a spreadsheet must not run them.
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", typeID, "first_name", "=HYPERLINK(\"http://x\")", "last_name", "+1",
		"email", "bo@example.com", "country", "DE", "state", "-2", "city", "@SUM(A1)", "custom_field[company]", "=cmd|' /C calc'!A0",
		"custom_field[age]", "-5")), "Contact Added Successfully")
	expectOK(t, e.a.send("POST", "/api/contacts/add", form("contact_type_id", other, "first_name", "Cy", "email", "cy@example.com", "country", "FR")), "Contact Added Successfully")

	r := doRaw(t, e.a, "GET", "/api/contacts/export?contact_type_id="+typeID)
	if r.code != 200 || !strings.HasPrefix(r.contentType, "text/csv") {
		t.Fatalf("export: %d %s %q", r.code, r.contentType, r.body)
	}
	recs := readCSV(t, r.body)
	wantHeader := "email,first_name,last_name,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code,age,company" +
		",status,consent_source,consent_id,consent_basis,consent_at,consent_ip,consent_confirmed_at" // how each contact came, last
	if got := strings.Join(recs[0], ","); got != wantHeader {
		t.Fatalf("header: %s", got)
	}
	if len(recs) != 3 {
		t.Fatalf("rows: %q", recs)
	}
	if got := strings.Join(recs[1][:13], "|"); got != "ann@example.com|Ann|Lee||United States||Los Angeles||||90001|31|Acme, Inc." {
		t.Fatalf("ann: %s", got)
	}
	// Added through the API: confirmed, source api, when (no basis, id or confirmation).
	if c := recs[1][13:]; c[0] != "confirmed" || c[1] != "api" || c[2] != "" || c[3] != "" || c[4] == "" || c[6] != "" {
		t.Fatalf("ann's consent: %q", c)
	}
	bo := recs[2]
	for i, want := range map[int]string{0: "bo@example.com", 1: `'=HYPERLINK("http://x")`, 2: "'+1", 4: "Germany", 5: "'-2", 6: "'@SUM(A1)", 11: "'-5", 12: "'=cmd|' /C calc'!A0"} {
		if bo[i] != want {
			t.Fatalf("bo[%d] (%s): want %q, got %q", i, recs[0][i], want, bo[i])
		}
	}

	t.Run("segment", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Adults",
			"select_field[0]", "age", "select_operator[0]", "greater_than", "value[0]", "18")), "Saved Successfully")
		segs := list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments")
		sid := strconv.FormatInt(segs[0].ID, 10)
		expectOK(t, e.a.send("POST", "/api/segment/email/store", form("segment_id", sid, "first_name", "Hand", "last_name", "Added", "email", "hand@example.com")), "Added Successfully")
		r := doRaw(t, e.a, "GET", "/api/contacts/export?segment_id="+sid)
		recs := readCSV(t, r.body)
		if r.code != 200 || len(recs) != 3 || strings.Join(recs[0], ",") != wantHeader {
			t.Fatalf("segment export: %d %q", r.code, r.body)
		}
		if recs[1][0] != "ann@example.com" || recs[1][11] != "31" || recs[1][4] != "United States" {
			t.Fatalf("ann: %q", recs[1])
		}
		if got := strings.Join(recs[2], "|"); got != "hand@example.com|Hand|Added|||||||||||||||||" {
			t.Fatalf("hand-added: %s", got)
		}
		// Another account's segment is not found.
		expectNF(t, e.b.send("GET", "/api/contacts/export?segment_id="+sid, nil), "Record Not Found")
	})

	t.Run("errors", func(t *testing.T) {
		expectNF(t, e.b.send("GET", "/api/contacts/export?contact_type_id="+typeID, nil), "Record Not Found")
		for _, q := range []string{"contact_type_id=x", "contact_type_id=99999", "segment_id=0", "segment_id=99999"} {
			expectNF(t, e.a.send("GET", "/api/contacts/export?"+q, nil), "Record Not Found")
		}
		expectVAL(t, e.a.send("GET", "/api/contacts/export", nil), map[string][]string{
			"contact_type_id": {"The contact type id field is required when segment id is not present."},
			"segment_id":      {"The segment id field is required when contact type id is not present."},
		})
		expectVAL(t, e.a.send("GET", "/api/contacts/export?contact_type_id="+typeID+"&segment_id=1", nil), map[string][]string{
			"contact_type_id": {"The contact type id field prohibits segment id from being present."},
		})
		// Keys are required as everywhere.
		r := do(t, e.app, "GET", "/api/contacts/export?contact_type_id="+typeID, nil, nil)
		if r.Code != 401 {
			t.Fatalf("no keys: %d %s", r.Code, r.raw)
		}
		// An empty type answers the header alone.
		empty := e.a.newType(t, "Empty")
		if recs := readCSV(t, doRaw(t, e.a, "GET", "/api/contacts/export?contact_type_id="+empty).body); len(recs) != 1 {
			t.Fatalf("empty: %q", recs)
		}
	})
}

// TestContactsExportMemory exports 100,000 contacts through a real server
// on loopback (every row arrives, in order), then measures the live heap
// of the same export every 10,000 rows: it holds one batch at a time.
func TestContactsExportMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 contacts")
	}
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("HERALD_EXPORT_ROWS")); err == nil && v > 0 {
		n = v // docs/BENCHMARKS.md's figure: HERALD_EXPORT_ROWS=1000000
	}
	e := newEnv(t)
	typeID := e.a.newType(t, "Many")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "company", "field_type", "text")), "Added Successfully")
	tid, _ := strconv.ParseInt(typeID, 10, 64)
	now := models.NewTimestamp(time.Now())
	rows := make([]models.Contact, 0, 1000)
	for i := 0; i < n; i++ {
		rows = append(rows, models.Contact{UserID: e.a.id, ContactTypeID: tid, FirstName: "First" + strconv.Itoa(i), LastName: "Last name of contact " + strconv.Itoa(i),
			Email: fmt.Sprintf("person%06d@example.com", i), Country: "840", State: "California", City: "San Francisco",
			AddressLine1: "1 Market Street, Suite " + strconv.Itoa(i), PostalCode: "94105",
			CustomFields: models.JSONText(`{"company":"Company number ` + strconv.Itoa(i) + ` of a long list"}`), CreatedAt: now, UpdatedAt: now})
		if len(rows) == cap(rows) {
			if err := e.svc.DB.W.CreateInBatches(rows, 500).Error; err != nil {
				t.Fatal(err)
			}
			rows = rows[:0]
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = e.app.Listener(ln) }()
	t.Cleanup(func() { _ = e.app.Shutdown() })

	req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://"+ln.Addr().String()+"/api/contacts/export?contact_type_id="+typeID, nil)
	req.Header.Set("PublicKey", e.a.keys.PublicKey)
	req.Header.Set("SecretKey", e.a.keys.SecretKey)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	cr := csv.NewReader(resp.Body)
	cr.ReuseRecord = true
	var size int64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if lines == n && rec[0] != fmt.Sprintf("person%06d@example.com", n-1) {
			t.Fatalf("last row: %q", rec)
		}
		for _, c := range rec {
			size += int64(len(c)) + 1
		}
		lines++
	}
	resp.Body.Close()
	took := time.Since(start)
	if lines != n+1 {
		t.Fatalf("lines: %d", lines)
	}
	t.Logf("exported %d contacts (%.1f MB of CSV) over HTTP in %v", n, float64(size)/1e6, took.Round(time.Millisecond))

	// Memory: the same export written into a writer that, every 10,000
	// rows, collects and reads the live heap. It runs on the export's own
	// goroutine, so nothing allocates meanwhile and the figure is what the
	// export holds. The world data (country names) is loaded once per
	// process on first use: loaded before the baseline, it is not the
	// export's.
	if _, ok := world.CountryByID(840); !ok {
		t.Fatal("world data")
	}
	exp, err := e.svc.Contacts.Export(context.Background(), e.a.id, service.ExportInput{ContactTypeID: typeID})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	var base, m runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak int64
	var marks []string
	mw := &measuringWriter{every: int64(size) / 10, measure: func() {
		runtime.GC()
		runtime.ReadMemStats(&m)
		g := int64(m.HeapAlloc) - int64(base.HeapAlloc)
		peak = max(peak, g)
		marks = append(marks, fmt.Sprintf("%.1f", float64(g)/1e6))
	}}
	if err := exp.WriteCSV(context.Background(), mw); err != nil {
		t.Fatal(err)
	}
	t.Logf("live heap above the baseline every ~10,000 rows (MB): %s; at most %.1f MB for a %.1f MB file", strings.Join(marks, " "), float64(peak)/1e6, float64(mw.n)/1e6)
	// Not streamed, the rows or the file (17.6 MB) would be held; streamed,
	// one batch of 1,000 rows is.
	if len(marks) < 9 || peak > 4<<20 {
		t.Fatalf("the export holds %d bytes (%d samples): it is not streamed", peak, len(marks))
	}
}

// measuringWriter discards what it is given and calls measure every
// `every` bytes.
type measuringWriter struct {
	n, next, every int64
	measure        func()
}

func (w *measuringWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.n >= w.next {
		w.next = w.n + w.every
		w.measure()
	}
	return len(p), nil
}
