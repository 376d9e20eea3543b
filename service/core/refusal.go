package core

// How a stored refusal or failure text reads back (status, reason, words)
// for the console, the API and the repair migration.

import (
	"strings"

	"herald/delivery"
)

// Refusal is a stored failure reason (a ledger row's error, a send's last
// block or failure) read for people.
type Refusal struct {
	Stage string // where in the exchange: "MAIL FROM", "RCPT TO", "DATA", …; "" when not the relay's answer
	Reply string // the relay's answer ("553 5.7.1 Sender address rejected: …"), or what went wrong
}

// ReadRefusal reads a reason herald stored: `delivery: permanent failure
// at <stage>: <reply>` becomes the stage in words and the reply; a build
// error is said plainly without its package prefix.
func ReadRefusal(reason string) Refusal {
	reason = strings.TrimSpace(reason)
	for _, kind := range []string{"delivery: permanent failure at ", "delivery: temporary failure at "} {
		rest, ok := strings.CutPrefix(reason, kind)
		if !ok {
			continue
		}
		stage, reply, ok := strings.Cut(rest, ": ")
		if !ok {
			break
		}
		words := map[string]string{
			delivery.StageMail: "MAIL FROM", delivery.StageRcpt: "RCPT TO", delivery.StageData: "DATA",
			delivery.StageConnect: "connecting", delivery.StageAuth: "login", delivery.StageEnvelope: "the envelope",
			delivery.StageStore: "the outbox",
		}[stage]
		if words == "" {
			break
		}
		return Refusal{Stage: words, Reply: FlatLine(reply)}
	}
	return Refusal{Reply: FlatLine(strings.TrimPrefix(reason, "delivery: "))}
}

// String is the refusal in one line: "553 5.7.1 … (at MAIL FROM)". The
// stage is told after the answer: Postfix gives a sender's refusal at
// RCPT TO, so the answer says more than the stage.
func (r Refusal) String() string {
	if r.Stage == "" {
		return r.Reply
	}
	return r.Reply + " (at " + r.Stage + ")"
}

// Failure is a stored reason of a message that could not be built or
// sent (a send's first or last failure), said for people.
type Failure struct {
	Built bool   // it could not be built (else it could not be sent)
	Text  string // why, in plain words, with the detail
}

// ReadFailure reads a failure reason herald stored.
func ReadFailure(reason string) Failure {
	r := strings.TrimSpace(reason)
	if rest, ok := strings.CutPrefix(r, delivery.ErrInvalidMessage.Error()+": "); ok {
		return Failure{Built: true, Text: "the message is not valid mail (" + FlatLine(rest) + ")"}
	}
	if rest, ok := strings.CutPrefix(r, delivery.ErrInvalidDKIM.Error()); ok {
		return Failure{Built: true, Text: "the DKIM key of the sender's domain cannot be used" + FlatLine(rest)}
	}
	if strings.HasPrefix(r, "delivery: DKIM signing") {
		return Failure{Built: true, Text: "the message could not be signed with the sender domain's DKIM key (" + FlatLine(strings.TrimPrefix(r, "delivery: ")) + ")"}
	}
	if !strings.HasPrefix(r, "delivery: permanent failure at ") && !strings.HasPrefix(r, "delivery: temporary failure at ") {
		return Failure{Built: true, Text: FlatLine(strings.TrimPrefix(r, "delivery: "))}
	}
	return Failure{Text: ReadRefusal(r).String()}
}
