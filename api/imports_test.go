package api_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"mime/multipart"
	"sort"
	"strings"
	"testing"
)

type importReport struct {
	Status  string `json:"status"`
	Created int64  `json:"created"`
	Updated int64  `json:"updated"`
	Skipped int64  `json:"skipped"`
	Rows    int64  `json:"rows"`
	Problem []struct {
		Line   int64  `json:"line"`
		Reason string `json:"reason"`
	} `json:"rejected"`
}

// upload posts a multipart body; fields are written in order, the file
// where "file" appears among them.
func upload(t *testing.T, c *client, fields [][2]string, fileName, content string) (reply, importReport) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if f[0] == "file" {
			w, _ := mw.CreateFormFile("file", fileName)
			w.Write([]byte(content))
			continue
		}
		mw.WriteField(f[0], f[1])
	}
	mw.Close()
	r := c.send("POST", "/api/contacts/upload-csv", rawBody{mw.FormDataContentType(), b.String()})
	var env struct {
		Import importReport `json:"import"`
	}
	_ = json.Unmarshal([]byte(r.raw), &env)
	return r, env.Import
}

func TestUploadCSV(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Imported")
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "age", "field_type", "number")), "Added Successfully")
	fields := [][2]string{{"contact_type_id", typeID}, {"file", ""}}

	csvText := "\ufeffEmail,First Name,last_name,country,age,shoe_size\r\n" +
		"ann@example.com,Ann,\"Lee, Jr.\",US,31,9\r\n" +
		"\"bob@example.com\",\"Bob\nMulti\",Smith,Germany,,10\r\n" +
		"not-an-email,X,Y,US,1,1\r\n" +
		"cid@example.com,Cid,Old,Atlantis,2,2\r\n" +
		"dee@example.com,Dee,Age,DE,very,3\r\n" +
		"ANN@example.com,Annie,,US,32,9\r\n" +
		"bad\xffutf8@example.com,Z,Z,US,1,1\r\n"
	r, rep := upload(t, e.a, fields, "people.CSV", csvText)
	expectOK(t, r, "Imported Successfully")
	if rep.Status != "done" || rep.Created != 1 || rep.Updated != 0 || rep.Skipped != 5 || rep.Rows != 7 {
		t.Fatalf("report: %+v", rep)
	}
	reasons := map[int64]string{}
	for _, p := range rep.Problem {
		reasons[p.Line] = p.Reason
	}
	for line, want := range map[int64]string{
		1: `column "shoe_size" ignored`, 3: "first name must not contain line breaks", 5: "valid email", 6: "country is invalid",
		7: "age must be a number", 9: "invalid UTF-8",
	} {
		if !strings.Contains(reasons[line], want) {
			t.Errorf("line %d: want %q, got %q (all: %+v)", line, want, reasons[line], rep.Problem)
		}
	}
	cs := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
	if len(cs) != 1 {
		t.Fatalf("contacts: %+v", cs)
	}
	// The later row of ann wins; bob's name with a quoted newline would
	// break the To header of his mail (decisions.md 8): his row is refused.
	if cs[0].Email != "ann@example.com" || cs[0].FirstName != "Annie" || cs[0].LastName != "" || *cs[0].CustomField["age"].FieldValue != "32" || cs[0].Country != "United States" {
		t.Fatalf("ann: %+v", cs[0])
	}

	t.Run("updates only the columns given", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/segment/store", form("contact_type_id", typeID, "segment_name", "Young",
			"select_field[0]", "age", "select_operator[0]", "less_than", "value[0]", "30")), "Saved Successfully")
		r, rep := upload(t, e.a, fields, "more.csv", "email,age\nann@example.com,20\nnew@example.com,5\n")
		expectOK(t, r, "Imported Successfully")
		if rep.Created != 1 || rep.Updated != 1 || rep.Skipped != 0 {
			t.Fatalf("report: %+v", rep)
		}
		c := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")[0]
		if c.FirstName != "Annie" || *c.CustomField["age"].FieldValue != "20" || c.Country != "United States" {
			t.Fatalf("ann after partial import: %+v", c)
		}
		segs := list[segment](t, e.a.send("GET", "/api/segment/list", nil), "segments")
		if segs[0].SegmentEmailsCount != 2 {
			t.Fatalf("segment not kept current by the import: %+v", segs[0])
		}
	})

	t.Run("type after file", func(t *testing.T) {
		r, rep := upload(t, e.a, [][2]string{{"file", ""}, {"contact_type_id", typeID}}, "late.csv", "email\nlate@example.com\n")
		expectOK(t, r, "Imported Successfully")
		if rep.Created != 1 {
			t.Fatalf("report: %+v", rep)
		}
	})

	t.Run("refused", func(t *testing.T) {
		r, _ := upload(t, e.a, nil, "", "")
		expectVAL(t, r, map[string][]string{"contact_type_id": {"The contact type id field is required."}, "file": {"The file field is required."}})
		r = e.a.send("POST", "/api/contacts/upload-csv", form("contact_type_id", typeID))
		expectVAL(t, r, map[string][]string{"file": {"The file field is required."}})
		r, _ = upload(t, e.a, fields, "people.xlsx", "email\na@example.com\n")
		expectVAL(t, r, map[string][]string{"file": {"The file must be a file of type: csv."}})
		r, _ = upload(t, e.a, fields, "empty.csv", "")
		expectVAL(t, r, map[string][]string{"file": {"The file is empty."}})
		r, _ = upload(t, e.a, fields, "noemail.csv", "name,age\nx,1\n")
		expectVAL(t, r, map[string][]string{"file": {"The file must have a header row with an email column."}})
		r, _ = upload(t, e.b, fields, "x.csv", "email\nb@example.com\n")
		expectNF(t, r, "Record Not Found")
		r, _ = upload(t, e.a, [][2]string{{"contact_type_id", "abc"}, {"file", ""}}, "x.csv", "email\nb@example.com\n")
		expectNF(t, r, "Record Not Found")
		r = e.a.send("POST", "/api/contacts/upload-csv", rawBody{"multipart/form-data; boundary=zz", "--zz\r\nbroken"})
		if r.Code != 400 {
			t.Fatalf("broken multipart: %d %s", r.Code, r.raw)
		}
	})
}

func TestCSVSample(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	expectOK(t, e.a.send("POST", "/api/custom-fields/save", form("field_name", "join_date", "field_type", "datetime-local")), "Added Successfully")
	req := e.a
	resp := doRaw(t, req, "GET", "/api/contacts/csv-sample/download")
	if resp.code != 200 || !strings.HasPrefix(resp.contentType, "text/csv") {
		t.Fatalf("sample: %d %s", resp.code, resp.contentType)
	}
	recs, err := csv.NewReader(strings.NewReader(resp.body)).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "email" || recs[0][len(recs[0])-1] != "join_date" || len(recs[1]) != len(recs[0]) {
		t.Fatalf("sample csv: %v %q", err, resp.body)
	}
	// The sample imports cleanly.
	typeID := e.a.newType(t, "Sample")
	r, rep := upload(t, e.a, [][2]string{{"contact_type_id", typeID}, {"file", ""}}, "sample.csv", resp.body)
	expectOK(t, r, "Imported Successfully")
	if rep.Created != 1 || rep.Skipped != 0 {
		t.Fatalf("sample import: %+v", rep)
	}
}

// A file with a quote that never closes is refused at the line the quote
// opens (422, key file), after the rows before it are imported; the
// import's report says the same.
func TestUploadCSVUnclosedQuote(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	typeID := e.a.newType(t, "Imported")
	fields := [][2]string{{"contact_type_id", typeID}, {"file", ""}}
	r, _ := upload(t, e.a, fields, "people.csv", "email,first_name\nann@example.com,Ann\nbob@example.com,Bob\n\"cid@example.com,Cid\ndee@example.com,Dee\n")
	expectVAL(t, r, map[string][]string{"file": {"Line 4: a quoted field is not closed. The rows before it were imported: close the quote and import the file again."}})
	cs := list[contact](t, e.a.send("GET", "/api/contacts/list", nil), "contacts")
	var emails []string
	for _, c := range cs {
		emails = append(emails, c.Email)
	}
	sort.Strings(emails)
	if strings.Join(emails, " ") != "ann@example.com bob@example.com" {
		t.Fatalf("contacts after the refused file: %v", emails)
	}
}
