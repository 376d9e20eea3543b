package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/smtptest"
)

// apiClient calls a running herald's API with an account's keys.
type apiClient struct {
	t    *testing.T
	base string
	keys keysOut
}

func (c *apiClient) call(method, path string, body url.Values) map[string]any {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body.Encode()))
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil || resp.StatusCode != 200 || out["status"] != "success" {
		c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return out
}

// TestSendOverHTTP drives a whole single send through a running herald:
// the API, the engine, a real SMTP relay, then the recipient's links.
func TestSendOverHTTP(t *testing.T) {
	t.Parallel()
	live := startLiveHerald(t, nil) // an account, a verified sender, a group, three contacts
	c, relay := live.apiClient, live.relay
	c.call("POST", "/api/notification-recipient/save", url.Values{"email_address": {"boss@example.com"}, "email_owner": {"Boss"}})
	send := url.Values{"template_id": {"1"}, "template_html": {`<p>Hi ((first_name))</p><a href="https://shop.example.com/">Shop</a>`},
		"sender_id": {"1"}, "unsubscribe_group_id": {"1"}, "single_send_name": {"First"}, "subject": {"Hello"}, "preheader": {"News"},
		"recipient_id[]": {"contacts_1"}, "schedule_type": {"0"}}
	utr := c.call("POST", "/api/single/send/create", send)["message"].(map[string]any)["utr"].(string)
	wait := func(utr string) map[string]any {
		var d map[string]any
		eventually.NoError(t, 30*time.Second, func() error {
			d = c.call("GET", "/api/single-send/details?utr="+utr, nil)["message"].(map[string]any)["singleSend"].([]any)[0].(map[string]any)
			if d["status"].(float64) != 3 {
				return fmt.Errorf("send not completed: %v", d)
			}
			return nil
		})
		return d
	}
	d := wait(utr)
	if d["triggered"].(float64) != 3 || d["delivered"].(float64) != 3 || d["sent_at"] == nil {
		t.Fatalf("statistics: %v", d)
	}
	var bob smtptest.Message
	for _, m := range relay.Messages() {
		if m.To == "bob@example.com" {
			bob = m
		}
	}
	h := bob.Header()
	unsub := unsubscribeLink(bob)
	if !strings.HasPrefix(unsub, c.base+"/u/") || h.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" {
		t.Fatalf("headers: %v", h)
	}
	tok := strings.TrimPrefix(unsub, c.base+"/u/")
	get := func(path string) *http.Response {
		t.Helper()
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(c.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if r := get("/t/o/" + tok + ".gif"); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/gif" {
		t.Fatalf("pixel: %d %s", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := get("/t/c/" + tok + "/0"); r.StatusCode != 302 || r.Header.Get("Location") != "https://shop.example.com/" {
		t.Fatalf("click: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	if r := get("/t/c/" + tok + "/7"); r.StatusCode != 404 {
		t.Fatalf("click on a link not in the message: %d", r.StatusCode)
	}
	if r := get("/m/" + tok); r.StatusCode != 200 || !strings.Contains(r.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("view in browser: %d %q", r.StatusCode, r.Header.Get("Content-Security-Policy"))
	}
	if r := get("/u/" + tok[:len(tok)-3] + "abc"); r.StatusCode != 404 {
		t.Fatalf("forged token: %d", r.StatusCode)
	}
	// RFC 8058: a mail client's POST, no cookie, no CSRF token.
	resp, err := http.Post(unsub, "application/x-www-form-urlencoded", strings.NewReader("List-Unsubscribe=One-Click"))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("one-click: %v %d", err, resp.StatusCode)
	}
	resp.Body.Close()
	d = c.call("GET", "/api/single-send/details?utr="+utr, nil)["message"].(map[string]any)["singleSend"].([]any)[0].(map[string]any)
	if d["unsubscribes"].(float64) != 1 || d["total_opens"].(float64) != 1 || d["unique_opens"].(float64) != 1 {
		t.Fatalf("after the links: %v", d)
	}
	// The preference page shows the group, now left.
	presp, _ := http.Get(unsub)
	page, _ := io.ReadAll(presp.Body)
	presp.Body.Close()
	if !strings.Contains(string(page), "Monthly news") || !strings.Contains(string(page), "checked") {
		t.Fatalf("preference page: %s", page)
	}

	// A second send to the same audience skips bob.
	send.Set("single_send_name", "Second")
	utr2 := c.call("POST", "/api/single/send/create", send)["message"].(map[string]any)["utr"].(string)
	if d := wait(utr2); d["triggered"].(float64) != 2 {
		t.Fatalf("second send: %v", d)
	}
	if n := relay.PerRecipient()["bob@example.com"]; n != 1 {
		t.Fatalf("bob got %d messages", n)
	}
	// The notification recipient got a summary of each send.
	eventually.NoError(t, 10*time.Second, func() error {
		if n := relay.PerRecipient()["boss@example.com"]; n < 2 {
			return fmt.Errorf("summaries: %d", n)
		}
		return nil
	})
	// And a report when a CSV import ends.
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("contact_type_id", "1")
	fw, _ := mw.CreateFormFile("file", "more.csv")
	_, _ = fw.Write([]byte("email,first_name\ndee@example.com,Dee\n"))
	mw.Close()
	req, _ := http.NewRequest("POST", c.base+"/api/contacts/upload-csv", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("PublicKey", c.keys.PublicKey)
	req.Header.Set("SecretKey", c.keys.SecretKey)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("upload: %v", err)
	}
	eventually.True(t, 10*time.Second, "no import report", func() bool { return relay.PerRecipient()["boss@example.com"] >= 3 })
	var subjects []string
	for _, m := range relay.Messages() {
		if m.To == "boss@example.com" {
			subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header().Get("Subject"))
			subjects = append(subjects, subject)
		}
	}
	if len(subjects) != 3 || !strings.HasPrefix(subjects[0], "Single send completed: ") || subjects[2] != "Contact import done: more.csv" {
		t.Fatalf("notification subjects: %q", subjects)
	}
}
