package delivery

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"
)

// SESNotification is what Amazon SES publishes about a message, through
// SNS (notificationType) or a configuration set's event destination
// (eventType); the webhook and a notification that arrives as mail read
// it alike.
type SESNotification struct {
	NotificationType string  `json:"notificationType"`
	EventType        string  `json:"eventType"`
	Mail             SESMail `json:"mail"`
	Bounce           *struct {
		BounceType        string    `json:"bounceType"`
		BounceSubType     string    `json:"bounceSubType"`
		Timestamp         time.Time `json:"timestamp"`
		BouncedRecipients []struct {
			EmailAddress   string `json:"emailAddress"`
			Action         string `json:"action"`
			Status         string `json:"status"`
			DiagnosticCode string `json:"diagnosticCode"`
		} `json:"bouncedRecipients"`
	} `json:"bounce"`
	Complaint *struct {
		Timestamp             time.Time `json:"timestamp"`
		ComplaintFeedbackType string    `json:"complaintFeedbackType"`
		ComplainedRecipients  []struct {
			EmailAddress string `json:"emailAddress"`
		} `json:"complainedRecipients"`
	} `json:"complaint"`
	Delivery *struct {
		Timestamp    time.Time `json:"timestamp"`
		Recipients   []string  `json:"recipients"`
		SMTPResponse string    `json:"smtpResponse"`
	} `json:"delivery"`
	DeliveryDelay *struct {
		Timestamp         time.Time `json:"timestamp"`
		DelayType         string    `json:"delayType"`
		DelayedRecipients []struct {
			EmailAddress   string `json:"emailAddress"`
			Status         string `json:"status"`
			DiagnosticCode string `json:"diagnosticCode"`
		} `json:"delayedRecipients"`
	} `json:"deliveryDelay"`
}

// SESMail is the message a notification is about.
type SESMail struct {
	Source  string `json:"source"`
	Headers []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"headers"`
	CommonHeaders struct {
		MessageID string `json:"messageId"`
	} `json:"commonHeaders"`
}

// Header is the original message's header of that name (SES keeps them
// when the identity's notifications include the original headers).
func (m *SESMail) Header(name string) string {
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

// sesSubTypes: what SES's bounce subtypes say where the diagnostic does
// not (its documentation's list).
var sesSubTypes = map[string]string{
	"NoEmail":                  ReasonUserUnknown,
	"Suppressed":               ReasonOnHold, // on SES's own list: herald did not see why
	"OnAccountSuppressionList": ReasonOnHold,
	"MailboxFull":              ReasonMailboxFull,
	"MessageTooLarge":          ReasonMesgTooBig,
	"ContentRejected":          ReasonContentError,
	"AttachmentRejected":       ReasonContentError,
	"UnsubscribedRecipient":    ReasonOnHold,
}

// Reports are the reports of one notification, each failure judged like
// any other (Judge): SES's "Permanent" is not trusted to mean a gone
// mailbox (it says so of policy refusals too), and a "Transient" bounce is
// never a hard one. Source and recipients are set; the caller ties them
// to a message (Token, MessageID).
func (n *SESNotification) Reports() []Report {
	kind := n.NotificationType
	if kind == "" {
		kind = n.EventType
	}
	base := Report{Source: SourceSES, MessageID: strings.Trim(strings.TrimSpace(n.Mail.CommonHeaders.MessageID), "<>")}
	if base.MessageID == "" {
		base.MessageID = strings.Trim(strings.TrimSpace(n.Mail.Header("Message-ID")), "<>")
	}
	var out []Report
	switch {
	case kind == "Bounce" && n.Bounce != nil:
		for _, r := range n.Bounce.BouncedRecipients {
			f := Failure{Status: enhancedIn(r.Status), Diagnostic: diagnosticField(r.DiagnosticCode), Hint: sesSubTypes[n.Bounce.BounceSubType],
				Temporary: n.Bounce.BounceType != "Permanent"}
			if n.Bounce.BounceSubType == "NoEmail" {
				// SES read the receiver's answer as "no such address":
				// the answer to RCPT, however it is worded.
				f.Stage = StageRcpt
			}
			j := Judge(f)
			rep := base
			rep.Kind, rep.Recipient, rep.At, rep.Reason, rep.Status = j.Kind, plainAddress(r.EmailAddress), n.Bounce.Timestamp, j.Reason, j.Status
			rep.Diagnostic = clean(diagnosticField(r.DiagnosticCode), maxDiagnostic)
			if rep.Diagnostic == "" {
				rep.Diagnostic = strings.TrimSpace(n.Bounce.BounceType + " " + n.Bounce.BounceSubType)
			}
			out = append(out, rep)
		}
	case kind == "DeliveryDelay" && n.DeliveryDelay != nil:
		for _, r := range n.DeliveryDelay.DelayedRecipients {
			j := Judge(Failure{Status: enhancedIn(r.Status), Diagnostic: diagnosticField(r.DiagnosticCode), Delayed: true})
			rep := base
			rep.Kind, rep.Recipient, rep.At, rep.Reason, rep.Status = j.Kind, plainAddress(r.EmailAddress), n.DeliveryDelay.Timestamp, j.Reason, j.Status
			rep.Diagnostic = clean(r.DiagnosticCode+" "+n.DeliveryDelay.DelayType, maxDiagnostic)
			out = append(out, rep)
		}
	case kind == "Complaint" && n.Complaint != nil:
		if n.Complaint.ComplaintFeedbackType == "not-spam" {
			return nil
		}
		for _, r := range n.Complaint.ComplainedRecipients {
			rep := base
			rep.Kind, rep.Recipient, rep.At, rep.Reason = ReportComplaint, plainAddress(r.EmailAddress), n.Complaint.Timestamp, ReasonFeedback
			rep.Diagnostic = clean(n.Complaint.ComplaintFeedbackType, maxDiagnostic)
			out = append(out, rep)
		}
	case kind == "Delivery" && n.Delivery != nil:
		for _, r := range n.Delivery.Recipients {
			rep := base
			rep.Kind, rep.Recipient, rep.At, rep.Reason = ReportDelivered, plainAddress(r), n.Delivery.Timestamp, ReasonDelivered
			rep.Diagnostic = clean(n.Delivery.SMTPResponse, maxDiagnostic)
			out = append(out, rep)
		}
	}
	return out
}

// diagnosticField drops a DSN-style type prefix ("smtp; 550 …").
func diagnosticField(s string) string {
	if t, rest, ok := strings.Cut(s, ";"); ok && !strings.ContainsAny(strings.TrimSpace(t), " \t") {
		return strings.TrimSpace(rest)
	}
	return s
}

// sesInMail reads an SES notification that arrived as mail (an SNS
// subscription by e-mail): the JSON of the SNS envelope, or the bare
// notification. ok is false when the text holds none.
func sesInMail(text []byte) ([]Report, bool) {
	i := bytes.IndexByte(text, '{')
	if i < 0 || !bytes.Contains(text, []byte("notificationType")) && !bytes.Contains(text, []byte("eventType")) {
		return nil, false
	}
	// Mail systems fold long lines ("\n " inside the JSON's strings):
	// unfolded, the JSON only loses whitespace.
	js := bytes.ReplaceAll(bytes.ReplaceAll(text[i:], []byte("\r\n"), []byte("\n")), []byte("\n "), nil)
	dec := json.NewDecoder(bytes.NewReader(js))
	var envelope struct {
		Message *string `json:"Message"`
		SESNotification
	}
	if err := dec.Decode(&envelope); err != nil {
		return nil, false
	}
	n := envelope.SESNotification
	if envelope.Message != nil {
		n = SESNotification{}
		if err := json.Unmarshal([]byte(*envelope.Message), &n); err != nil {
			return nil, false
		}
	}
	if n.NotificationType == "" && n.EventType == "" {
		return nil, false
	}
	return n.Reports(), true
}
