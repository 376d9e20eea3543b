package main

import (
	"fmt"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/eventually"
)

// TestMailIdentityLive: a running herald greets the relay with the host of
// HERALD_BASE_URL (here an IP, so an address literal), and each campaign
// message names its contact type in List-Id and its send in Feedback-ID.
func TestMailIdentityLive(t *testing.T) {
	t.Parallel()
	h := startLiveHerald(t, nil) // HERALD_BASE_URL is http://127.0.0.1:<port>
	h.call("POST", "/api/contacts-type/add", url.Values{"name": {"Clientes de Zoë ☕"}})
	h.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"2"}, "email": {"zoe@example.com"}, "first_name": {"Z"}, "last_name": {"L"}, "country": {"250"}})

	send := func(name, target string) map[string]any {
		t.Helper()
		form := url.Values{"template_id": {"1"}, "template_html": {"<p>Hi</p>"}, "sender_id": {"1"}, "unsubscribe_group_id": {"1"},
			"single_send_name": {name}, "subject": {"Hello"}, "preheader": {"News"}, "recipient_id[]": strings.Split(target, ","), "schedule_type": {"0"}}
		utr := h.call("POST", "/api/single/send/create", form)["message"].(map[string]any)["utr"].(string)
		var d map[string]any
		eventually.NoError(t, 30*time.Second, func() error {
			if d = h.details(utr); d["status"].(float64) != 3 {
				return fmt.Errorf("send %s not completed: %v", name, d)
			}
			return nil
		})
		return d
	}
	idOf := func(d map[string]any, k string) string { return strconv.FormatInt(int64(d[k].(float64)), 10) }

	d := send("Spring", "contacts_1")
	m, _ := h.message("bob@example.com")
	if m.Helo != "[127.0.0.1]" {
		t.Errorf("EHLO %q, want the address literal [127.0.0.1]", m.Helo)
	}
	hd := m.Header()
	account := idOf(d, "user_id")
	if got, want := hd.Get("List-Id"), fmt.Sprintf(`"Customers" <type1.a%s.shop.example.com>`, account); got != want {
		t.Errorf("List-Id %q, want %q", got, want)
	}
	if got, want := hd.Get("Feedback-ID"), "s"+idOf(d, "id")+":"+account+":herald"; got != want {
		t.Errorf("Feedback-ID %q, want %q", got, want)
	}

	// A name beyond ASCII is RFC 2047-encoded and reads back whole.
	d = send("Zoë", "contacts_2")
	m, _ = h.message("zoe@example.com")
	raw := m.Header().Get("List-Id")
	if !strings.Contains(raw, "=?utf-8?") {
		t.Errorf("List-Id %q is not RFC 2047-encoded", raw)
	}
	name, err := new(mime.WordDecoder).DecodeHeader(raw)
	if want := fmt.Sprintf("Clientes de Zoë ☕ <type2.a%s.shop.example.com>", account); err != nil || name != want {
		t.Errorf("List-Id %q decodes to %q (%v), want %q", raw, name, err, want)
	}
	if got := m.Header().Get("Feedback-ID"); got != "s"+idOf(d, "id")+":"+account+":herald" {
		t.Errorf("Feedback-ID %q", got)
	}

	// Several targets: the send itself is the list.
	d = send("Both", "contacts_1,contacts_2")
	m, _ = h.message("zoe@example.com")
	if got, want := m.Header().Get("List-Id"), fmt.Sprintf(`"Both" <send%s.a%s.shop.example.com>`, idOf(d, "id"), account); got != want {
		t.Errorf("List-Id %q, want %q", got, want)
	}
	for _, x := range h.relay.Messages() {
		if x.Helo != "[127.0.0.1]" {
			t.Errorf("message to %s came after EHLO %q", x.To, x.Helo)
		}
	}
}

// HERALD_HELO_NAME overrides the host of HERALD_BASE_URL; a name that
// cannot follow EHLO is refused at start.
func TestHeloNameConfig(t *testing.T) {
	t.Parallel()
	for env, want := range map[[2]string]string{
		{"https://herald.example.com", ""}:                   "herald.example.com",
		{"http://192.0.2.4:8080", ""}:                        "[192.0.2.4]",
		{"https://herald.example.com", "mta1.example.net"}:   "mta1.example.net",
		{"https://herald.example.com", "[IPv6:2001:db8::1]"}: "[IPv6:2001:db8::1]",
	} {
		cfg, err := loadConfig(envFrom(map[string]string{"HERALD_BASE_URL": env[0], "HERALD_HELO_NAME": env[1]}))
		if err != nil || cfg.HeloName != want {
			t.Errorf("%v: %q %v, want %q", env, cfg.HeloName, err, want)
		}
	}
	for _, bad := range []string{"mta 1", "mta\r\nRSET", "[2001:db8::1]"} {
		if _, err := loadConfig(envFrom(map[string]string{"HERALD_HELO_NAME": bad})); err == nil || !strings.Contains(err.Error(), "HERALD_HELO_NAME") {
			t.Errorf("HERALD_HELO_NAME=%q: %v", bad, err)
		}
	}
}
