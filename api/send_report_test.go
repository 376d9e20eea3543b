package api_test

import (
	"encoding/json"
	"testing"
)

// The report of a send through the API: its classes as counted (rows
// put in place here; the counting is the service's, tested there), the
// hours cumulative, and another account's send not found.
func TestSingleSendReport(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	var id int64
	if err := e.svc.DB.R.Raw("SELECT id FROM single_sends WHERE utr = ?", utr).Scan(&id).Error; err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"INSERT INTO send_hit_classes (send_id, kind, machine, client, device, country, hits, people) VALUES (?, 1, 0, 'apple_mail', 'mobile', 'FR', 3, 2)",
		"INSERT INTO send_hit_classes (send_id, kind, machine, client, device, country, hits, people) VALUES (?, 2, 0, 'other', 'desktop', 'FR', 1, 1)",
		"INSERT INTO send_hit_classes (send_id, kind, machine, client, device, country, hits, people) VALUES (?, 1, 1, 'gmail', 'desktop', '', 4, 0)",
		"INSERT INTO send_hit_hours (send_id, kind, hour, people) VALUES (?, 1, 2, 2)",
	} {
		if err := e.svc.DB.W.Exec(q, id).Error; err != nil {
			t.Fatal(err)
		}
	}
	r := e.a.send("GET", "/api/single-send/report?utr="+utr, nil)
	var body struct {
		Status  string `json:"status"`
		Message struct {
			Report struct {
				Utr     string `json:"utr"`
				Clients []struct {
					Key     string `json:"key"`
					Opened  int64  `json:"opened"`
					Clicked int64  `json:"clicked"`
				} `json:"clients"`
				Countries []struct {
					Key    string `json:"key"`
					Opened int64  `json:"opened"`
				} `json:"countries"`
				MachineOpens int64   `json:"machine_opens"`
				Opened       []int64 `json:"opened_within_hours"`
			} `json:"report"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(r.raw), &body); err != nil {
		t.Fatalf("%v: %s", err, r.raw)
	}
	rep := body.Message.Report
	if body.Status != "success" || rep.Utr != utr || len(rep.Clients) != 2 || rep.Clients[0].Key != "apple_mail" || rep.Clients[0].Opened != 2 ||
		rep.Clients[1].Key != "other" || rep.Clients[1].Clicked != 1 || len(rep.Countries) != 1 || rep.Countries[0].Key != "FR" || rep.MachineOpens != 4 {
		t.Fatalf("report %s", r.raw)
	}
	if len(rep.Opened) != 337 || rep.Opened[1] != 0 || rep.Opened[2] != 2 || rep.Opened[336] != 2 {
		t.Fatalf("hours %v", rep.Opened[:4])
	}
	expectNF(t, e.b.send("GET", "/api/single-send/report?utr="+utr, nil), "Record not found")
}
