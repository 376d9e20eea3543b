package delivery

import "errors"

// Verdict is what became of one attempt at a message, as Classify reads
// the relay's answer.
type Verdict int

const (
	// VerdictDelivered: the relay (or the outbox) took the message.
	VerdictDelivered Verdict = iota
	// VerdictRetry: sending it later may succeed (a 4xx answer, a dropped
	// connection, the relay refusing the connection or the login).
	VerdictRetry
	// VerdictBounce: the recipient's mailbox refused it for good. The only
	// verdict that suppresses the address.
	VerdictBounce
	// VerdictBlock: the relay refused the sender, the content, or refused
	// by policy (5.7.x). The recipient is not at fault: the message is kept
	// to go again once the cause is fixed.
	VerdictBlock
	// VerdictFailed: herald could not send it at all (the message could
	// not be built, an address it cannot put on the wire, or the relay
	// unreachable to the end of the retry window): a failure of the send,
	// never of the recipient.
	VerdictFailed
)

func (v Verdict) String() string {
	switch v {
	case VerdictDelivered:
		return "delivered"
	case VerdictRetry:
		return "retry"
	case VerdictBounce:
		return "bounce"
	case VerdictBlock:
		return "block"
	case VerdictFailed:
		return "failed"
	}
	return "unknown"
}

// Classify decides what an SMTP answer at a stage of the transaction means
// (code 0: no answer, the connection failed). The table, first match wins:
//
//	2xx                                   delivered
//	any 4xx, or no answer                 retry
//	5xx with x.7.x (policy), any stage    block
//	5xx at connect or auth                retry: the relay's or the configuration's trouble
//	5xx at mail (the sender refused)      block
//	5xx at data (the content refused)     block
//	5xx at rcpt with 5.1.x or 5.2.x       bounce (unknown user, bad address, mailbox disabled)
//	  except 5.2.2 (mailbox full)         retry: RFC 3463 calls it transient, and RFC 5321
//	                                      4.5.3.1.10 asks clients to treat a 552 at RCPT as 452
//	5xx at rcpt without an enhanced code  bounce for 550, 551, 553; retry for 552; else block
//	5xx at rcpt with another x.y.z        block (5.3.x system, 5.4.x routing, 5.5.x protocol,
//	                                      5.6.x content: not the mailbox's fault)
//	5xx anywhere else (envelope, store)   failed
func Classify(stage string, code int, enhanced EnhancedCode) Verdict {
	switch {
	case code >= 200 && code < 300:
		return VerdictDelivered
	case code < 500 || code > 599:
		return VerdictRetry
	}
	if enhanced.Valid() && enhanced[1] == 7 {
		return VerdictBlock
	}
	switch stage {
	case StageConnect, StageAuth:
		return VerdictRetry
	case StageMail, StageData:
		return VerdictBlock
	case StageRcpt:
		if !enhanced.Valid() || enhanced[1] == 0 && enhanced[2] == 0 {
			// No code, or the generic 5.0.0 a server adds when it has none
			// (go-smtp does): the reply code decides.
			switch code {
			case 550, 551, 553:
				return VerdictBounce
			case 552:
				return VerdictRetry
			}
			return VerdictBlock
		}
		switch {
		case enhanced[1] == 2 && enhanced[2] == 2:
			return VerdictRetry
		case enhanced[1] == 1, enhanced[1] == 2:
			return VerdictBounce
		}
		return VerdictBlock
	}
	return VerdictFailed
}

// Exhausted is what a message whose last attempt asked for a retry
// becomes when the retry window is over (decisions.md 5: a temporary
// failure still failing then counts as a bounce): an answer to its
// recipient at RCPT is a bounce, unless it is x.7.x policy; an answer to
// the sender or the content (MAIL, DATA) or a policy code is a block;
// anything without a recipient's answer (the relay unreachable, the login
// refused) is a failure of the send.
func Exhausted(stage string, code int, enhanced EnhancedCode) Verdict {
	switch {
	case code == 0:
		return VerdictFailed
	case enhanced.Valid() && enhanced[1] == 7:
		return VerdictBlock
	case stage == StageRcpt:
		return VerdictBounce
	case stage == StageMail || stage == StageData:
		return VerdictBlock
	}
	return VerdictFailed
}

// ClassifyError is Classify for what Transport.Send or a Job's Build
// returned; final says the retry window is over (Exhausted then decides a
// retry). nil is delivered; an error that is not a *SendError is a message
// that could not be built (failed). A SendError without an answer is a
// retry when the connection, the login or the outbox failed or when it
// says so (Temporary), else failed (an address herald cannot put on the
// wire). ErrSkip, ErrStale and ErrHeld are the caller's to handle first:
// nothing was sent.
func ClassifyError(err error, final bool) Verdict {
	if err == nil {
		return VerdictDelivered
	}
	var se *SendError
	if !errors.As(err, &se) {
		return VerdictFailed
	}
	var v Verdict
	switch {
	case se.Code != 0:
		v = Classify(se.Stage, se.Code, se.Enhanced)
	case se.Temporary, se.Stage == StageConnect, se.Stage == StageAuth, se.Stage == StageStore:
		v = VerdictRetry
	default:
		v = VerdictFailed
	}
	if v == VerdictRetry && final {
		return Exhausted(se.Stage, se.Code, se.Enhanced)
	}
	return v
}
