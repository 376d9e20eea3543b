package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"herald/eventually"
	"herald/models"
	"herald/smtptest"
)

// TestRealPostfixDSN: Postfix, the relay herald sends through, accepts
// both messages of a send (250), then fails to deliver one of them (the
// next hop, a loopback server, refuses that recipient with 550 5.1.1) and
// writes its own delivery status notification to the message's VERP
// return path. Postfix delivers the DSN for the bounce
// domain to herald's inbound SMTP server; herald reads it, counts the
// bounce once and suppresses the address with the DSN's status code and
// diagnostic (a real Postfix in the feedback tests).
func TestRealPostfixDSN(t *testing.T) {
	sink := smtptest.Start(t)
	inbound := freeAddr(t)
	// The next hop refuses lost@example.org once Postfix has accepted it.
	sink.Refuse(smtptest.AtRcpt, "lost@example.org", 550, "5.1.1", "Mailbox does not exist")
	pf := startPostfix(t, sink, postfixTables{
		transport: "herald.test smtp:[" + strings.Replace(inbound, ":", "]:", 1) + "\n",
	})
	c, svc, _ := postfixHerald(t, pf, map[string]string{"HERALD_INBOUND_ADDR": inbound})
	acct := c.keys.UserID
	addVerifiedSender(t, c, svc, sinkWaiter(t, sink, pf), "news@shop.example.com", "shop")
	c.call("POST", "/api/contacts-type/add", url.Values{"name": {"Customers"}})
	c.call("POST", "/api/unsubscribes-groups/save", url.Values{"group_name": {"News"}, "description": {"Monthly news"}, "is_display": {"1"}})
	for _, e := range []string{"ann@example.com", "lost@example.org"} {
		c.call("POST", "/api/contacts/add", url.Values{"contact_type_id": {"1"}, "email": {e}, "first_name": {"F"}, "last_name": {"L"}, "country": {"840"}})
	}
	utr := c.call("POST", "/api/single/send/create", url.Values{"template_id": {"1"}, "template_html": {`<p>Hi ((first_name))</p>`},
		"sender_id": {"1"}, "unsubscribe_group_id": {"1"}, "single_send_name": {"Spring"}, "subject": {"Spring news"}, "preheader": {"News"},
		"recipient_id[]": {"contacts_1"}, "schedule_type": {"0"}})["message"].(map[string]any)["utr"].(string)

	var ss *models.SingleSend
	eventually.NoError(t, 60*time.Second, func() error {
		var err error
		if ss, err = svc.SingleSends.Get(context.Background(), acct, utr); err != nil {
			t.Fatal(err)
		}
		if ss.Bounces == 1 && ss.Status == models.SendCompleted {
			return nil
		}
		return fmt.Errorf("the DSN did not count: status %d delivered %d bounces %d\n%s", ss.Status, ss.Delivered, ss.Bounces, pf.log())
	})
	// Postfix accepted both: the bounce came afterwards, by mail, as
	// Postfix's own notice to the return path.
	if log := pf.log(); !strings.Contains(log, "sender non-delivery notification") || !strings.Contains(log, "to=<bounces+b") {
		t.Fatalf("no DSN from Postfix to a return path in its log:\n%s", log)
	}
	if ss.Delivered != 2 || ss.Status != models.SendCompleted {
		t.Fatalf("send: status %d delivered %d\n%s", ss.Status, ss.Delivered, pf.log())
	}
	var sup models.Suppression
	if err := svc.DB.R.Where("user_id = ? AND email = ?", acct, "lost@example.org").First(&sup).Error; err != nil {
		t.Fatalf("lost@example.org is not suppressed: %v", err)
	}
	if sup.StatusCode != "5.1.1" || !strings.Contains(sup.Diagnostic, "Mailbox does not exist") || sup.Source != "dsn" {
		t.Fatalf("suppression: code %q diagnostic %q source %q", sup.StatusCode, sup.Diagnostic, sup.Source)
	}
	var n int64
	svc.DB.R.Model(&models.Suppression{}).Where("user_id = ?", acct).Count(&n)
	if n != 1 {
		t.Fatalf("%d addresses suppressed, want 1", n)
	}
	// The message to ann@example.com reached the sink through Postfix,
	// with its return path at the bounce domain.
	for _, m := range sink.Messages() {
		if m.To == "ann@example.com" && !strings.HasPrefix(m.From, "bounces+b") {
			t.Fatalf("return path %q", m.From)
		}
	}
}
