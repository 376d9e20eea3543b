package api_test

import (
	"strings"
	"testing"
)

// TestSingleSendRecordsCarryBlocks: the extra field blocks (decisions.md
// 8) follows unsubscribes in single send records, in details and in the
// list; the engine's other counters stay out of the API.
func TestSingleSendRecordsCarryBlocks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := newSendSetup(t, e, e.a)
	utr := utrOfReply(t, e.a.send("POST", "/api/single/send/create", jsonBody(t, s.body())))
	if err := e.svc.DB.W.Exec("UPDATE single_sends SET blocks = 3, failures = 2, last_block = 'x', first_failure = 'y' WHERE utr = ?", utr).Error; err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/single-send/details?utr=" + utr, "/api/single-send/list"} {
		raw := e.a.send("GET", path, nil).raw
		if !strings.Contains(raw, `"bounces":0,"unsubscribes":0,"blocks":3,"soft_bounces":0,"spam_reports":0,"unique_open_token":{}`) {
			t.Fatalf("%s: %s", path, raw)
		}
		for _, k := range []string{"failures", "first_failure", "last_failure", "last_block", "paused_at", "pause_reason", "block_streak", "streak_delivered"} {
			if strings.Contains(raw, `"`+k+`"`) {
				t.Fatalf("%s carries %s: %s", path, k, raw)
			}
		}
	}
}
