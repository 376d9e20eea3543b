package delivery

// The reasons a failure is given: the vocabulary of Sisimai, the bounce
// classifier many mail services use, so that an operator who knows it
// reads herald's the same way.
const (
	// The mailbox or the domain is gone: the only reasons that make a
	// hard bounce (and a suppression).
	ReasonUserUnknown = "userunknown" // the local part does not exist
	ReasonHostUnknown = "hostunknown" // the domain does not exist or takes no mail
	ReasonHasMoved    = "hasmoved"    // the mailbox moved, no forwarding address
	ReasonNotAccept   = "notaccept"   // the domain accepts no mail at all (null MX)

	// The recipient's side, for now: soft.
	ReasonMailboxFull = "mailboxfull"
	ReasonSuspend     = "suspend"  // the account is disabled or suspended
	ReasonFiltered    = "filtered" // the recipient's own filter refused it
	ReasonExceedLimit = "exceedlimit"
	ReasonMesgTooBig  = "mesgtoobig"

	// The way there or the receiving system: soft.
	ReasonExpired        = "expired" // the relay gave up retrying
	ReasonNetworkError   = "networkerror"
	ReasonSystemError    = "systemerror"
	ReasonSystemFull     = "systemfull"
	ReasonTooManyConn    = "toomanyconn"
	ReasonSpeeding       = "speeding" // a sending-rate limit
	ReasonNoRelaying     = "norelaying"
	ReasonFailedSTARTTLS = "failedstarttls"
	ReasonSyntaxError    = "syntaxerror"
	ReasonContentError   = "contenterror"
	ReasonMailerError    = "mailererror"

	// The sender, its IP or the content was refused: a block.
	ReasonBlocked         = "blocked"
	ReasonRejected        = "rejected" // the envelope sender was refused
	ReasonSpamDetected    = "spamdetected"
	ReasonVirusDetected   = "virusdetected"
	ReasonPolicyViolation = "policyviolation"
	ReasonSecurityError   = "securityerror"
	ReasonAuthFailure     = "authfailure" // SPF, DKIM or DMARC
	ReasonBadReputation   = "badreputation"
	ReasonRequirePTR      = "requireptr"
	ReasonNotCompliantRFC = "notcompliantrfc"

	// Nothing said enough to tell.
	ReasonOnHold    = "onhold"
	ReasonUndefined = "undefined"

	// Not failures.
	ReasonFeedback    = "feedback" // a complaint
	ReasonUnsubscribe = "unsubscribe"
	ReasonDelivered   = "delivered"
)

// hardReasons: the mailbox or the domain is gone for good.
var hardReasons = map[string]bool{
	ReasonUserUnknown: true, ReasonHostUnknown: true, ReasonHasMoved: true, ReasonNotAccept: true,
}

// policyReasons: the receiver refused the sender, its IP, its
// authentication or the content, not the mailbox (decisions.md 8).
var policyReasons = map[string]bool{
	ReasonBlocked: true, ReasonRejected: true, ReasonSpamDetected: true, ReasonVirusDetected: true,
	ReasonPolicyViolation: true, ReasonSecurityError: true, ReasonAuthFailure: true,
	ReasonBadReputation: true, ReasonRequirePTR: true, ReasonNotCompliantRFC: true,
}

// IsHardReason reports whether reason says the mailbox or the domain is
// gone (userunknown, hostunknown, hasmoved, notaccept).
func IsHardReason(reason string) bool { return hardReasons[reason] }

// IsPolicyReason reports whether reason is a refusal of the sender or the
// content (a block), not of the mailbox.
func IsPolicyReason(reason string) bool { return policyReasons[reason] }

// statusReasons: what an enhanced status code (RFC 3463 and the IANA
// registry) says on its own, as "subject.detail". Codes that tell nothing
// of the cause (x.0.0, x.1.0, x.2.0) are absent: the text must say.
var statusReasons = map[string]string{
	"1.1": ReasonUserUnknown, // bad destination mailbox address
	"1.2": ReasonHostUnknown, // bad destination system address
	"1.3": ReasonUserUnknown, // bad destination mailbox address syntax
	"1.4": ReasonUserUnknown, // destination mailbox address ambiguous
	"1.6": ReasonHasMoved,    // mailbox has moved, no forwarding address
	"1.7": ReasonRejected,    // bad sender's mailbox address syntax
	"1.8": ReasonRejected,    // bad sender's system address
	// 1.10 is a null MX (RFC 7505), but Microsoft's servers send it for
	// any unknown recipient: the text decides; without one it is the
	// address that is refused, which both readings agree on.
	"1.10": ReasonUserUnknown,
	"2.1":  ReasonSuspend,     // mailbox disabled, not accepting messages
	"2.2":  ReasonMailboxFull, // mailbox full
	"2.3":  ReasonExceedLimit, // message length exceeds administrative limit
	"2.4":  ReasonSystemError, // mailing list expansion problem
	"3.0":  ReasonSystemError,
	"3.1":  ReasonSystemFull,
	"3.2":  ReasonSystemError, // system not accepting network messages (for now)
	"3.3":  ReasonSystemError,
	"3.4":  ReasonMesgTooBig,
	"3.5":  ReasonSystemError,
	"4.0":  ReasonNetworkError,
	"4.1":  ReasonNetworkError, // no answer from host
	"4.2":  ReasonNetworkError, // bad connection
	"4.3":  ReasonSystemError,  // directory server failure
	"4.4":  ReasonHostUnknown,  // unable to route
	"4.5":  ReasonSystemError,  // mail system congestion
	"4.6":  ReasonNetworkError, // routing loop
	"4.7":  ReasonExpired,      // delivery time expired
	"5.0":  ReasonSyntaxError,
	"5.1":  ReasonSyntaxError,
	"5.2":  ReasonSyntaxError,
	"5.3":  ReasonTooManyConn, // too many recipients
	"5.4":  ReasonSyntaxError,
	"5.5":  ReasonSyntaxError,
	"6.0":  ReasonContentError,
	"6.1":  ReasonContentError,
	"6.2":  ReasonContentError,
	"6.3":  ReasonContentError,
	"6.4":  ReasonContentError,
	"6.5":  ReasonContentError,
	"6.6":  ReasonContentError,
	"7.0":  ReasonSecurityError,
	"7.1":  ReasonBlocked, // delivery not authorized, message refused
	"7.2":  ReasonSecurityError,
	"7.3":  ReasonSecurityError,
	"7.4":  ReasonSecurityError,
	"7.5":  ReasonSecurityError,
	"7.6":  ReasonSecurityError,
	"7.7":  ReasonSecurityError,
	"7.8":  ReasonSecurityError, // authentication credentials invalid
	"7.9":  ReasonSecurityError,
	"7.10": ReasonSecurityError,
	"7.11": ReasonFailedSTARTTLS, // encryption required
	"7.12": ReasonSecurityError,
	"7.13": ReasonSuspend, // user account disabled
	"7.14": ReasonSecurityError,
	"7.15": ReasonSecurityError,
	"7.16": ReasonSecurityError,
	"7.17": ReasonSuspend, // mailbox owner has changed
	"7.18": ReasonSuspend,
	"7.19": ReasonSecurityError,
	"7.20": ReasonAuthFailure, // no passing DKIM signature
	"7.21": ReasonAuthFailure,
	"7.22": ReasonAuthFailure,
	"7.23": ReasonAuthFailure, // SPF validation failed
	"7.24": ReasonAuthFailure,
	"7.25": ReasonRequirePTR, // reverse DNS validation failed
	"7.26": ReasonAuthFailure,
	"7.27": ReasonRejected, // the sender's domain has a null MX
	"7.28": ReasonSpamDetected,
	"7.29": ReasonAuthFailure,
	"7.30": ReasonSecurityError,
	// Microsoft's own: banned or listed sending IPs, DMARC, reputation.
	"7.509": ReasonAuthFailure,
	"7.510": ReasonAuthFailure,
	"7.606": ReasonBlocked,
	"7.607": ReasonBlocked,
	"7.608": ReasonBlocked,
	"7.650": ReasonBadReputation,
	"7.708": ReasonBadReputation,
	"1.351": ReasonUserUnknown,
	"4.310": ReasonHostUnknown,
	"4.316": ReasonNetworkError,
	"4.317": ReasonNetworkError,
}

// reasonOfStatus is what an enhanced status code alone says, or "".
func reasonOfStatus(status string) string {
	if len(status) < 5 || status[1] != '.' {
		return ""
	}
	return statusReasons[status[2:]]
}
