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
	// VerdictBounce: the recipient's mailbox or domain is gone (Judge's
	// hard bounce). The only verdict that suppresses the address.
	VerdictBounce
	// VerdictSoftBounce: the recipient's side refused this message for
	// good (a 5xx at RCPT, or a retry window run out), but nothing says
	// the address is gone: counted as a bounce, the address kept (its
	// soft bounces count towards the soft-bounce limit).
	VerdictSoftBounce
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
	case VerdictSoftBounce:
		return "soft bounce"
	case VerdictBlock:
		return "block"
	case VerdictFailed:
		return "failed"
	}
	return "unknown"
}

// Classify decides what the relay's answer at a stage of the transaction
// means for the message (code 0: no answer, the connection failed). The
// answer is read by Judge, as any report is; then, first match wins:
//
//	2xx                                   delivered
//	any 4xx, or no answer                 retry
//	5xx with an x.7.x code, any stage     block
//	5xx at connect or auth                retry: the relay's or the configuration's trouble
//	5xx read as a policy refusal          block
//	5xx at mail (the sender refused)      block
//	5xx at data (the content refused)     block
//	5xx at rcpt, the mailbox or domain
//	  gone (userunknown, hostunknown, …)  bounce: the only verdict that suppresses
//	5xx at rcpt, a full mailbox           retry: RFC 3463 calls it transient, and RFC 5321
//	                                      4.5.3.1.10 asks clients to treat a 552 at RCPT as 452
//	5xx at rcpt, the content's size or
//	  form (mesgtoobig, contenterror)     block
//	5xx at rcpt, anything else            soft bounce: this message failed for good, but
//	                                      nothing says the address is gone (a disabled
//	                                      account, a filter, a reply that says nothing)
//	5xx anywhere else (envelope, store)   failed
func Classify(stage string, code int, enhanced EnhancedCode, message string) Verdict {
	switch {
	case code >= 200 && code < 300:
		return VerdictDelivered
	case code < 500 || code > 599:
		return VerdictRetry
	}
	policyCode := enhanced.Valid() && enhanced[1] == 7
	if stage == StageConnect || stage == StageAuth {
		// The relay refusing herald's own connection or login: its words
		// ("authentication required") are about the configuration.
		if policyCode {
			return VerdictBlock
		}
		return VerdictRetry
	}
	j := Judge(Failure{Stage: stage, Code: code, Status: enhanced.String(), Diagnostic: message})
	if policyCode || j.Kind == ReportBlock {
		return VerdictBlock
	}
	switch stage {
	case StageMail, StageData:
		return VerdictBlock
	case StageRcpt:
		switch {
		case j.Kind == ReportHardBounce:
			return VerdictBounce
		case j.Reason == ReasonMailboxFull || code == 552 && !enhanced.Valid():
			return VerdictRetry
		case j.Reason == ReasonMesgTooBig || j.Reason == ReasonExceedLimit || j.Reason == ReasonContentError:
			return VerdictBlock
		}
		return VerdictSoftBounce
	}
	return VerdictFailed
}

// Exhausted is what a message whose last attempt asked for a retry
// becomes when the retry window is over (decisions.md 5: a temporary
// failure still failing then counts as a bounce). It counts as one, soft:
// a temporary answer never says the mailbox is gone. An answer to the
// sender or the content (MAIL, DATA) or a policy refusal is a block;
// anything without a recipient's answer (the relay unreachable, the login
// refused) is a failure of the send.
func Exhausted(stage string, code int, enhanced EnhancedCode, message string) Verdict {
	policyCode := enhanced.Valid() && enhanced[1] == 7
	switch {
	case code == 0:
		return VerdictFailed
	case stage == StageConnect || stage == StageAuth:
		if policyCode {
			return VerdictBlock
		}
		return VerdictFailed
	}
	j := Judge(Failure{Stage: stage, Code: code, Status: enhanced.String(), Diagnostic: message})
	switch {
	case policyCode || j.Kind == ReportBlock:
		return VerdictBlock
	case stage == StageRcpt:
		return VerdictSoftBounce
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
		v = Classify(se.Stage, se.Code, se.Enhanced, se.Message)
	case se.Temporary, se.Stage == StageConnect, se.Stage == StageAuth, se.Stage == StageStore:
		v = VerdictRetry
	default:
		v = VerdictFailed
	}
	if v == VerdictRetry && final {
		return Exhausted(se.Stage, se.Code, se.Enhanced, se.Message)
	}
	return v
}

// JudgeError is the one verdict's reading of what Transport.Send
// returned: the relay's reply judged as any report is, with the stage it
// answered. ok is false for an error without a reply.
func JudgeError(err error) (j Judgement, ok bool) {
	var se *SendError
	if !errors.As(err, &se) || se.Code == 0 {
		return Judgement{}, false
	}
	j = Judge(Failure{Stage: se.Stage, Code: se.Code, Status: se.Enhanced.String(), Diagnostic: se.Message})
	if j.Status == "" && se.Enhanced.Valid() {
		j.Status = se.Enhanced.String()
	}
	return j, true
}
