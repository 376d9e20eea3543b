package delivery

import (
	"regexp"
	"strconv"
	"strings"
)

// Failure is what one failure says, whatever brought it: the relay's
// reply during the send, a DSN's block, a bounce text, a provider's event.
type Failure struct {
	Stage      string // the command refused (Stage… constant); "" when the source does not say
	Code       int    // the SMTP reply code; 0 when none is known
	Status     string // the enhanced status code the source gives apart from the text (a DSN's Status field); "" when none
	Diagnostic string // the receiving server's words
	Delayed    bool   // the relay is still trying (a DSN's "Action: delayed", a provider's deferral)
	Temporary  bool   // the source says the failure is not final (a provider's "transient" bounce): never hard
	Hint       string // the source's own reason (Reason… constant), taken where the words and the code say nothing
}

// Judgement is the one verdict on a failure (decisions.md 8 and 9).
type Judgement struct {
	// Kind is ReportHardBounce (the mailbox or the domain is gone: the
	// only kind that suppresses), ReportSoftBounce, ReportBlock (the
	// sender, its IP, its authentication or the content was refused) or
	// ReportDeferral (the relay is still trying).
	Kind   ReportKind
	Reason string // Reason… constant
	Status string // the enhanced status code the verdict rests on; "" when none
	Code   int    // the SMTP reply code, when known
}

// Judge reads a failure, the same way whatever brought it:
//
//  1. The words of the reply decide the reason (textRules), the enhanced
//     status code where the words say nothing (statusReasons): the text
//     outranks a generic code, and where a Status field and the text's
//     own code disagree, the more specific one counts, the text's on a
//     tie ("Status: 5.1.1" beside "550 5.7.1 IP address blacklisted" is
//     a block).
//  2. The command refused refines it: a mailbox's refusal given after
//     DATA is a filter's (Japanese carriers, among others, answer "user
//     unknown" to mail their users filter), at MAIL FROM it is the
//     sender's; a refusal at MAIL FROM without words refuses the sender,
//     at the greeting the client.
//  3. Nothing recognisable leaves "onhold" (something was said) or
//     "undefined": never a hard bounce.
//
// The kind follows from the reason: a gone mailbox or domain is a hard
// bounce unless the failure is temporary (a 4xx code); a policy reason is
// a block; a relay that is still trying is a deferral; the rest is soft.
func Judge(f Failure) Judgement {
	text := prepareText(f.Diagnostic)
	code := f.Code
	if code < 200 || code > 599 {
		// Not an SMTP reply code (a provider's own, 605): none.
		code = 0
	}
	if code == 0 {
		code = replyCodeIn(text)
	}
	field := f.Status
	if field != "" {
		// Only a well-formed failure code counts ("5.1.1", not "5xx").
		field = codeOfText(field)
	}
	status := preferStatus(field, codeOfText(text))
	if status != "" && code != 0 && status[0] != byte('0'+code/100) && field == "" {
		// A code in the words of another class than the reply's: the
		// reply's class holds.
		status = strconv.Itoa(code/100) + status[1:]
	}
	stage := f.Stage
	if stage == "" {
		stage = stageIn(text)
	}
	reason := reasonOfText(text)
	byStatus := reasonOfStatus(status)
	switch {
	case reason == "" && byStatus != "":
		reason = byStatus
	case reason == "":
		reason = f.Hint
	case hardReasons[reason] && hardReasons[byStatus]:
		// Both say the mailbox or the domain is gone: the code tells
		// which more precisely (5.1.6 moved, 5.1.2 no such domain).
		reason = byStatus
	}
	mailboxCode := strings.HasPrefix(status[min(len(status), 1):], ".1.")
	switch {
	case hardReasons[reason] && stage == StageMail:
		reason = ReasonRejected
	case reason == ReasonUserUnknown && stage != StageRcpt && !mailboxCode && (stage == StageData || !directoryWords.MatchString(text)):
		// "User unknown" is the mailbox's answer only where it answers
		// the recipient: at RCPT, or with a mailbox code (x.1.x; after
		// DATA, that is the RCPT answer arriving late with pipelining).
		// Said after DATA or nowhere in particular, it is what many
		// receivers (Japanese carriers' domain filters among them) say
		// of mail their user's filter refused: the address may well
		// exist.
		reason = ReasonFiltered
	}
	if reason == "" {
		switch stage {
		case StageMail:
			reason = ReasonRejected
		case StageConnect:
			reason = ReasonBlocked
		}
	}
	if reason == "" && f.Delayed {
		reason = ReasonExpired
	}
	if reason == "" {
		reason = ReasonUndefined
		if text != "" || status != "" || code != 0 {
			reason = ReasonOnHold
		}
	}
	class := byte(0)
	switch {
	case status != "":
		class = status[0]
	case code != 0:
		class = byte('0' + code/100)
	}
	kind := ReportSoftBounce
	switch {
	case f.Delayed:
		kind = ReportDeferral
	case policyReasons[reason]:
		kind = ReportBlock
	case hardReasons[reason] && class != '4' && !f.Temporary:
		kind = ReportHardBounce
	}
	return Judgement{Kind: kind, Reason: reason, Status: status, Code: code}
}

// specificity ranks an enhanced code: x.0.0 says only its class, x.y.0
// its subject, anything else the cause.
func specificity(s string) int {
	switch {
	case s == "":
		return -1
	case strings.HasSuffix(s, ".0.0"):
		return 0
	case strings.HasSuffix(s, ".0"):
		return 1
	}
	return 2
}

// codeOfText is the most specific enhanced code in the words (the first
// of the most specific): a relay that wraps the receiver's reply puts a
// vaguer code of its own first ("5.1.0 - … 550 5.7.1 Access denied").
func codeOfText(text string) string {
	best := ""
	for _, m := range enhanced.FindAllStringSubmatch(text, 10) {
		if m[1] == "2" {
			continue
		}
		c := m[1] + "." + m[2] + "." + m[3]
		if specificity(c) > specificity(best) {
			best = c
		}
	}
	return best
}

// preferStatus picks between a Status field and the code in the words.
func preferStatus(field, inText string) string {
	if specificity(field) > specificity(inText) {
		return field
	}
	if inText != "" {
		return inText
	}
	return field
}

// replyCode: the first SMTP reply code of a failure's words.
var replyCode = regexp.MustCompile(`(?:^|[\s;:(\[<'"#=-])([45][0-5][0-9])(?:[\s\-:.,;)\]'"]|$)`)

// replyCodeIn is the first reply code in the (prepared) words, or 0.
func replyCodeIn(text string) int {
	m := replyCode.FindStringSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// stageWords: how a report says which command the server refused.
var stageWords = []struct {
	stage string
	re    *regexp.Regexp
}{
	{StageRcpt, regexp.MustCompile(`(in reply to|after|did not like our|response to|during|to|progress was) (the )?rcpt( to)?\b|error from remote (mail )?server after rcpt|smtp:rcpt\b|\[rcpt_to\]|smtp command[: -]*rcpt`)},
	{StageData, regexp.MustCompile(`(in reply to|after|did not like our|response to|during) (the )?(end of (the )?data|data|final data|message body|the message)\b|after end of data|error from remote (mail )?server after (end of )?data|smtp command[: -]*data\b`)},
	{StageMail, regexp.MustCompile(`(in reply to|after|did not like our|response to|during) (the )?mail( from)?( command)?\b|error from remote (mail )?server after mail from|smtp command[: -]*mail from\b`)},
	{StageConnect, regexp.MustCompile(`(in reply to|after|during|while performing) (the )?(helo|ehlo|initial (connection|greeting)|greeting|connect|banner|smtp greeting)\b|before (the )?(helo|ehlo)`)},
}

// A session transcript: commands sent and the answers received (">>> DATA"
// then "<<< 550 …"; some servers turn the arrows the other way).
var (
	transcriptCommand = regexp.MustCompile(`(?:>>>|<<<|sent:?|send:?) ?(mail from|rcpt to|data|ehlo|helo)\b`)
	transcriptFailure = regexp.MustCompile(`(?:>>>|<<<|received:?) ?[45]\d\d\b`)
)

// stageIn is the command a report says the server refused, or "": in a
// transcript, the last command before the first failing answer.
func stageIn(text string) string {
	if f := transcriptFailure.FindStringIndex(text); f != nil {
		cmd := ""
		for _, m := range transcriptCommand.FindAllStringSubmatchIndex(text, 50) {
			if m[0] > f[0] {
				break
			}
			cmd = text[m[2]:m[3]]
		}
		switch cmd {
		case "mail from":
			return StageMail
		case "rcpt to":
			return StageRcpt
		case "data":
			return StageData
		case "ehlo", "helo":
			return StageConnect
		}
	}
	for _, s := range stageWords {
		if s.re.MatchString(text) {
			return s.stage
		}
	}
	return ""
}
