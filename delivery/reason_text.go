package delivery

// The text rules of the classifier: what receiving servers write when
// they refuse a message, by reason. The text is read lower-cased, with
// links taken out (a link's words, such as "…/reason/#filtered", are not
// the server's) and whitespace collapsed.

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// textRule is one reason and the words that say it. needles are plain
// strings one of which any match must contain (one per alternative of
// words); a text holding none of them is not searched with the
// expression, which saves most of the cost of reading a long notice.
// nil when an alternative has no such string.
type textRule struct {
	reason  string
	re      *regexp.Regexp
	needles []string
}

func reasonRule(reason string, words ...string) textRule {
	r := textRule{reason: reason, re: regexp.MustCompile(strings.Join(words, "|"))}
	for _, w := range words {
		re, err := syntax.Parse(w, syntax.Perl)
		if err != nil {
			panic(err)
		}
		n := needles(re.Simplify())
		if n == nil {
			r.needles = nil
			break
		}
		r.needles = append(r.needles, n...)
	}
	return r
}

// needles are strings of at least three characters one of which every
// match of re contains, or nil when none can be told.
func needles(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || len(string(re.Rune)) < 3 {
			return nil
		}
		return []string{string(re.Rune)}
	case syntax.OpCapture, syntax.OpPlus:
		return needles(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return needles(re.Sub[0])
		}
	case syntax.OpAlternate:
		var out []string
		for _, sub := range re.Sub {
			n := needles(sub)
			if n == nil {
				return nil
			}
			out = append(out, n...)
		}
		return out
	case syntax.OpConcat:
		// Of what the parts must contain (runs of plain characters, and
		// the parts' own needles), the set whose shortest string is the
		// longest: the rarest to find by chance.
		var best []string
		better := func(c []string) {
			if c == nil {
				return
			}
			if best == nil || shortest(c) > shortest(best) || shortest(c) == shortest(best) && len(c) < len(best) {
				best = c
			}
		}
		run := ""
		for _, sub := range re.Sub {
			if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase == 0 {
				run += string(sub.Rune)
				continue
			}
			if len(run) >= 3 {
				better([]string{run})
			}
			run = ""
			better(needles(sub))
		}
		if len(run) >= 3 {
			better([]string{run})
		}
		return best
	}
	return nil
}

func shortest(ss []string) int {
	n := 1 << 30
	for _, s := range ss {
		n = min(n, len(s))
	}
	return n
}

// matches reports whether the rule's words appear in text.
func (r *textRule) matches(text string) bool {
	if r.needles != nil {
		found := false
		for _, n := range r.needles {
			if strings.Contains(text, n) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return r.re.MatchString(text)
}

// textRules: the first rule whose words appear decides. The order puts
// the narrower before the broader where two may meet in one reply: a full
// or disabled mailbox before an unknown one ("the account … is disabled",
// not "does not exist"), the refused sender before the refused recipient
// ("domain of sender address … does not exist"), a blocklisted IP or a
// failed authentication before everything the same line may add.
var textRules = []textRule{
	reasonRule(ReasonMailboxFull,
		`mail ?box (is |was )?(full|over)`, `over ?quota`, `quota (exceeded|exceed|full)`, `exceeded (his|her|its|the|their|storage|mailbox)? ?(storage|quota|mailbox)`,
		`insufficient (disk|storage)`, `out of (storage|disk) space`, `mail ?box size limit`, `disk quota`, `not enough (disk )?space`,
		`(mailbox|inbox|storage) (space )?(is )?(full|exceeded)`, `full mail ?box`, `user(s|'s)? (mail ?box|quota) (is )?(full|exceeded)`,
		`has exceeded (the|its|their|his|her) (mail ?box|storage|quota)`, `mail ?box.{0,20}(exceeds|exceeded)`, `size of the mailbox`,
		`quota violation`, `user over quota`, `mail quota`),
	reasonRule(ReasonMesgTooBig,
		`message (is )?too (big|large)`, `message size (exceeds|too large|limit)`, `exceeds (the )?(fixed )?maximum message size`,
		`message length exceeds`, `mail size (limit|exceeds)`, `size (of (the )?message )?exceeds`, `maximum (message )?size`, `too large for`,
		`recipsizelimit`),
	reasonRule(ReasonSuspend,
		`(account|mail ?box|user|recipient|address)( \S+){0,3} (has been |is |was |are )?(temporarily |currently |now )?(disabled|suspended|deactivated|inactive|frozen|locked|discontinued|closed|expired|not active|no longer active)`,
		`(is|been) (disabled|suspended|deactivated|inactive|frozen)`, `account (is )?(blocked|closed)`, `compte .{0,30}bloqu`, `account has been (removed|deleted)`,
		`mail ?box (is )?(disabled|inactive|frozen)`, `disabled ?user`, `user suspended`),
	reasonRule(ReasonHasMoved,
		`no longer (on (this )?server|at this (address|site)|with us|here)`, `has moved`, `moved (permanently|away)`, `no forwarding address`,
		`address has changed`),
	reasonRule(ReasonNoRelaying,
		`relay(ing)? (access )?(denied|not permitted|prohibited|not allowed)`, `not (permitted|allowed|authori[sz]ed) to relay`, `unable to relay`,
		`we do not relay`, `no relaying`, `relaying (mail )?(to .{1,60} )?(is )?not allowed`, `isn'?t in my list of allowed rcpthosts`,
		`relay not permitted`, `not a gateway`),
	reasonRule(ReasonAuthFailure,
		`\bspf\b`, `\bdkim\b`, `\bdmarc\b`, `sender policy framework`, `unauthenticated (e-?mail|message|mail)`, `domainkeys`,
		`authentication (check|checks) (failed|fail)`, `failed (the )?(sender )?authentication`, `not authenticated (by|with)`),
	reasonRule(ReasonRequirePTR,
		`reverse (dns|lookup|hostname|resolution|mapping)`, `\bptr\b`, `\brdns\b`, `no (valid )?(reverse|ptr)`, `without a valid sender domain`,
		`cannot find your (host ?name|domain)`, `(host ?name|ip) (does not|doesn'?t) resolve`, `unresolvable (host|ip|address)`,
		`no dns (entry|record) for (your|the) (ip|host)`, `reverse dns`),
	reasonRule(ReasonBadReputation,
		`reputation`, `user complaints`, `senderscore`, `sender score`, `poor (sender|ip|sending) (score|history)`),
	// Blocklists by name before the words of spam: "blocked using
	// zen.spamhaus.org" lists the sending IP, it says nothing of the content.
	reasonRule(ReasonBlocked,
		`spamhaus`, `spamcop`, `\bsorbs\b`, `\bdnsbl\b`, `\brbls?\b`, `barracudacentral`, `abuseat`, `uceprotect`, `mailspike`,
		`black ?list`, `block ?list`, `deny ?list`),
	reasonRule(ReasonVirusDetected,
		`\bvirus`, `malware`, `infected`, `trojan`, `worm detected`, `malicious (content|attachment|code)`),
	reasonRule(ReasonSpamDetected,
		`\bspam`, `\bube\b`, `\buce\b`, `junk (mail|e-?mail)`, `bulk (e-?mail|mail)`, `content (rejected|filter)`, `message content (rejected|not accepted)`,
		`classified as (spam|junk|bulk)`, `considered (as )?(spam|unsolicited|junk)`, `unsolicited`, `looks like (spam|junk)`, `likely (spam|junk|suspicious)`,
		`suspicious (content|message|mail)`, `message (has been )?(identified|flagged|detected) as`, `content (is )?not (accepted|allowed)`,
		`(score|scored) too high`, `filtered as spam`, `rejected due to content`, `message (was )?rejected as (spam|junk|bulk)`),
	reasonRule(ReasonBlocked,
		`black ?list`, `block ?list`, `deny ?list`, `\bdnsbl\b`, `\brbl\b`, `\brbls\b`, `spamhaus`, `spamcop`, `sorbs`, `barracuda`, `abuseat`,
		`\bcbl\b`, `\bsbl\b`, `\bxbl\b`, `\bpbl\b`, `mailspike`, `uceprotect`, `proofpoint`,
		`blocked (using|by|ip|address|for|because|due|from|list|sender|host|connection)`, `(ip|address|host|network|connection|server|client|domain)s? (is |has been |was |are )?(temporarily |currently |permanently )?(blocked|banned|blacklisted|blocklisted|denied|refused|not allowed|listed)`,
		`client host (\[?\S+\]? )?(rejected|blocked|refused)`, `client (ip|address|host) .{0,40}(rejected|blocked|refused|not allowed)`,
		`banned`, `not accepting (connections|mail|messages|e-?mail)`, `connection (refused|rejected|denied|not allowed)`,
		`(ip|host|address|domain) .{0,40}(is|are|was|been|currently) (listed|found) (on|in|at)`, `listed (on|in|at|by) (the |a |our )?(\S+ )?(dnsbl|rbl|black ?list|block ?list|deny ?list|spamhaus|spamcop|sorbs|\S*bl\b)`, `service refus`, `refused (due|because|by policy)`,
		`your (ip|server|host|network|mail server)( \S+){0,4} (is|was|has been) `, `not allowed to send (mail|e-?mail|messages) (from|to)`,
		`too many (bad|invalid|unknown) (recipients|commands|errors)`, `(blocked|rejected) (for|due to) (abuse|spam)`, `\b(ip|host) (has|have) been blocked`,
		`^\d{3}[ -]blocked\b`, `\bblocked\b.{0,20}\bip\b`, `ip frequency`, `dynamic ip`, `dial-?up`, `residential`, `\[bl\d+\]`, `\[rbl\d+\]`,
		`^\d{3} rejected$`),
	reasonRule(ReasonRejected,
		`sender (e-?mail )?(address |domain )?(is |was )?(rejected|refused|denied|not allowed|blocked|unknown|invalid|not valid|verify failed|verification)`,
		`domain of sender( address)?`, `sender domain`, `(mail from|envelope from|envelope sender|return[- ]path|from address)( \S+){0,4} (is )?(rejected|invalid|refused|not allowed|denied|unknown|not valid|unverifiable)`,
		`purported responsible address`, `bad sender`, `invalid sender`, `unverified sender`, `sender verif`, `sender.{0,30}not (allowed|authori[sz]ed|permitted)`,
		`(rejected|refused) (the )?sender`, `not (a )?(member|subscriber) of`, `(only|must be) (members|subscribers)`, `permission to post`,
		`not (allowed|authori[sz]ed|permitted) to (post|send to|send messages to)`, `from:? domain is invalid`, `provide a valid from`, `invalid from (address|domain|header)`, `group .{0,60}(does not exist|not exist|may not exist)`,
		`google groups`, `address (does not|doesn'?t) (have|accept) (incoming|external) mail`, `mail from .{0,80} not allowed`,
		`(your|the) (e-?mail|sender) address .{0,40}(is|was) (blocked|rejected|not allowed|not accepted)`, `\bsender\b.{0,40}\brejected\b`),
	reasonRule(ReasonFiltered,
		`filtered`, `filter (rejected|refused|denied)`, `rejected by (the )?(recipient'?s? )?(filter|preferences|rules)`, `recipient preferences`,
		`domain filter`, `refused due to recipient`, `(blocked|rejected|refused) by (the )?recipient`, `recipient .{0,30}(has )?blocked`,
		`not (accepted|authori[sz]ed|allowed) by (the )?recipient`, `recipient (does not|doesn'?t) (accept|want)`, `user (has )?(refused|reject)`,
		`user reject`, `message refused by recipient`),
	reasonRule(ReasonUserUnknown,
		`user ?unknown`, `unknown (user|local[- ]?part|recipient|mail ?box|address|e-?mail address|account|alias)`, `recipient unknown`, `address unknown`,
		`no such (user|mail ?box|recipient|address|person|account|local user|user here)`, `no (mail ?box|account) (here )?(by|with) that name`,
		`(user|recipient|mail ?box|address|account|e-?mail address|local part|alias)( \S+){0,3} (does not|doesn'?t|did not|dose not) exist`, `(user|recipient|mail ?box|address) (not found|not known|not exist|not existent|nonexistent|non-existent|inexistent|not present|not listed|not local|invalid|unavailable|not valid)`,
		`invalid (recipient|mail ?box|address|user|e-?mail address|local part|destination)`, `(is )?not (a )?(valid|known|local|recognized|registered) (user|recipient|mail ?box|address|account)`,
		`recipient address rejected: (user|unknown|invalid|undeliverable|access denied|does not exist|no such|not found)`,
		`recipient address rejected\.? ?(\(|$)`, `recipient (rejected|not found|not ok|invalid|does not exist|is not accepted)`,
		`mail ?box (unavailable|does not exist|not found|is unavailable|invalid|not available|inactive)`, `the email account that you tried to reach does not exist`,
		`doesn'?t have a \S+ account`, `(resolver\.adr\.recip|recipientnotfound|recipnotfound)`, `(^|\d |#\d\.\d\.\d |: )address rejected\.?$`, `address (invalid|not found|does not exist)`,
		`bad (recipient|destination|address)`, `there is no (one|user|such)`, `no one (at|by) this`, `not listed in (the )?(public )?(name|address|directory)`,
		`not in (the )?(directory|address book)`, `not listed in (the )?(public )?(name|address|domino|directory)`, `(destinataire|adresse|utilisateur).{0,40}(invalide|inconnu)`, `unbekannt`, `existiert nicht`,
		`no existe`, `inesistente`, `non esiste`, `nicht gefunden`, `unknown or illegal alias`, `unrouteable address`, `badrcptto`, `validrcptto`,
		`address (is )?(no longer|not) (valid|in use|active)`, `this (address|account) (no longer|is not)`, `undeliverable address`,
		`recipients? (was|were) undeliverable`, `not a valid e-?mail`, `account (does not|doesn'?t) exist`, `is not a known user`,
		`address lookup failed`, `unknown or invalid`, `mailbox name not allowed`, `no valid recipients`, `invalid .{0,20}userid`, `(address|recipient|user|mailbox) (couldn'?t|could not|cannot|can'?t) be found`),
	reasonRule(ReasonNetworkError,
		`host not found, try again`, `name service error .{0,80}try again`, `temporary failure in name resolution`, `dns error`),
	reasonRule(ReasonHostUnknown,
		`(^|[\s<(\[])[a-z0-9-]+(\.[a-z0-9-]+)+\.?>?:? (does not exist|doesn'?t exist|not found|unknown|is unknown)`,
		`host (or domain name )?(is )?(unknown|not found)`, `unknown (host|domain)`, `domain (name )?(does not exist|not found|is not reachable|not reachable|unknown|invalid)`,
		`no such (host|domain)`, `name or service not known`, `illegal host`, `invalid (domain|host)`, `domain (isn'?t|is not) (valid|recognized)`,
		`unrouteable (domain|mail domain)`, `(mx|dns) (record|records)? ?(not found|lookup failed|does not exist)`, `no (mx|mail exchanger)( record)?s? (found|for)`,
		`host not found`, `domain .{0,40}does not (exist|accept)`, `non-?existent (domain|host)`, `cannot resolve`, `could not be resolved`,
		`hostname lookup failed`, `domain name not found`),
	reasonRule(ReasonNotAccept,
		`(does not|doesn'?t|do not) accept (any )?(e-?mail|mail|messages)`, `accepts no mail`, `null mx`, `not accepting (any )?mail`,
		`indicated no smtp service`, `no smtp service`),
	reasonRule(ReasonBadReputation,
		`rate limited due to`),
	reasonRule(ReasonSpeeding,
		`rate (limit|limited|exceeded)`, `too (fast|frequent|many (messages|mails|e-?mails))`, `sending (rate|limit|quota)`, `throttl`,
		`frequency limit`, `exceeded (the )?(rate|sending|message)`, `(message|mail) (rate|volume) `, `try again (later|in)`, `unexpected volume`,
		`temporarily (deferred|rate)`),
	reasonRule(ReasonTooManyConn,
		`too many (connections|concurrent|simultaneous|sessions|recipients|hosts)`, `connection (rate|limit|count)`, `concurrency`,
		`maximum (number of )?(connections|recipients)`),
	reasonRule(ReasonPolicyViolation,
		`polic(y|ies)`, `violat`, `prohibited`, `not allowed`, `not permitted`, `header error`, `security (issue|risk|threat)`,
		`(message|mail|e-?mail) (not|was not|is not) (accepted|allowed)`, `network not allowed`),
	reasonRule(ReasonNotCompliantRFC,
		`rfc ?(2822|5322|822|5321)`, `not (rfc|standards?)[- ]compliant`, `non-?compliant`, `(multiple|duplicate) (from|to|subject|date|message-id|sender)`,
		`must (have|contain) .{0,30}header`, `missing (required )?(header|date|message-id|from)`),
	reasonRule(ReasonContentError,
		`header(s)? (are |is )?(too (large|long|many)|error|syntax|invalid|malformed)`, `invalid (header|mime|message|character|content)`, `malformed`,
		`bare (lf|cr)`, `line (is )?too long`, `8-?bit`, `content (error|type)`, `mime`, `encoding`, `attachment`),
	reasonRule(ReasonSyntaxError,
		`syntax error`, `(improper|bad|wrong) (sequence|command)`, `command (not recognized|unrecognized|not implemented|out of sequence)`,
		`unrecognized command`, `invalid command`, `out of sequence`, `protocol error`),
	reasonRule(ReasonFailedSTARTTLS,
		`starttls`, `tls (is )?required`, `encryption (is )?required`, `must (use|issue) (a )?(starttls|tls)`, `\bssl\b`, `\btls\b`),
	reasonRule(ReasonExpired,
		`(message|delivery|mail) (has |was |is )?(expired|timed out|time ?out)`, `queue\.expired`, `retry (time|timeout|period)`,
		`(could not|couldn'?t|cannot|can'?t|was not|wasn'?t|has not been) (be )?(delivered|sent|send message) (for|within|after|in) (the last )?(\d+|one|two|three|four|five|several) ?(day|hour|minute)`,
		`cannot send message for`, `(has not|hasn'?t|not) (yet )?been delivered`, `too long in (the )?queue`, `gave up`, `giving up`, `retries exceeded`,
		`(delivery|retry|retries|attempts) (has |have )?(been )?(exhausted|exceeded)`, `unable to deliver .{0,60}(after|for|within) `,
		`still could not`, `maximum time`, `(lifetime|time to live|ttl) (has )?(expired|exceeded)`),
	reasonRule(ReasonNetworkError,
		`timed? ?out`, `connection (refused|reset|lost|closed|dropped|failed)`, `lost connection`, `no route to host`, `network (is )?unreachable`,
		`dns (error|failure|lookup|problem|timeout|query)`, `name ?server`, `servfail`, `nxdomain`, `routing loop`, `hop count`, `too many hops`,
		`mail loop`, `loop(s)? detected`, `unable to connect`, `(could not|couldn'?t|cannot|can'?t|failed to|did not) (accept our requests to )?connect`,
		`connect to .{1,80} (failed|refused)`, `no answer`, `host (is )?unreachable`, `unreachable`, `temporary (lookup|dns|resolution) failure`,
		`try again later`, `broken pipe`, `greeting`),
	reasonRule(ReasonSystemFull,
		`(mail )?system (is )?full`, `disk (is )?full`, `insufficient system storage`, `no space left`, `out of disk`),
	reasonRule(ReasonMailerError,
		`mailer (error|failed)`, `procmail`, `x-unix`, `program (exited|failed|error)`, `command (died|failed|output)`, `exit (code|status)`,
		`pipe to`, `local delivery failed`, `delivery to (a )?(program|pipe|file) failed`, `couldn'?t create`, `fatal error`),
	reasonRule(ReasonSystemError,
		`system error`, `internal (server )?error`, `server (error|failure|problem)`, `temporar(y|ily) (local )?(problem|failure|error|unavailable)`,
		`service (is )?(currently |temporarily )?(unavailable|not available)`, `local (error|problem)`, `(server|system|host) (is )?(busy|not available|unavailable|overloaded)`,
		`resources? (temporarily )?(unavailable|shortage|exhausted)`, `(mail )?(system|server) (error|problem|failure)`, `could not load`, `config(uration)? error`,
		`misconfigur`, `not (configured|set up)`, `i/o error`, `database`, `internal`),
	reasonRule(ReasonSecurityError,
		`access denied`, `security (policy|violation|reasons?|error|check)`, `certificate`, `not authori[sz]ed`, `unauthori[sz]ed`, `authentication (required|failed|failure)`, `forbidden`),
}

// directoryWords: a mailbox's absence as only the recipient's own system
// can state it (its directory, its alias tables, its own account list):
// such words need no command or code to be believed.
var directoryWords = regexp.MustCompile(strings.Join([]string{
	`not listed in (the )?(public )?(name|address|domino|directory)`, `recipient name is not recognized`, `no valid recipients`, `invalid final delivery userid`,
	`doesn'?t have an? \S+ account`,
	`resolver\.adr\.recip`, `recipientnotfound`, `recipnotfound`, `user unknown in (local recipient|virtual (alias|mailbox)|relay recipient) table`,
	`no mailbox here by that name`, `unknown local[- ]?part`, `address couldn'?t be found\. check for typos`,
	// A reply that names the address it refuses: the answer to RCPT TO
	// (a filter that refuses after DATA names no one: "550 : User unknown").
	`[45]\d\d[ :-]+(#?[45]\.\d{1,3}\.\d{1,3} )?<address@>(:|\.\.\.)? ?(user unknown|unknown user)`,
}, "|"))

// urls: links in a reply. Their paths are not the server's words
// ("…/reason/#filtered"), but their hosts may be ("spamhaus.org").
var urls = regexp.MustCompile(`(?i)\b(?:https?|ftp)://([^/\s?#]+)\S*`)

// maxJudged is how much of a failure's words are read: the reply and
// what a notice says around it come first; a longer text is a copy of
// the message or boilerplate.
const maxJudged = 16 << 10

// prepareText makes a diagnostic ready for the rules.
func prepareText(s string) string {
	if len(s) > maxJudged {
		s = strings.ToValidUTF8(s[:maxJudged], "")
	}
	s = urls.ReplaceAllString(s, " $1 ")
	// Addresses are names, not words: "filtered@example.net: user
	// unknown" says nothing of a filter.
	s = emailIn.ReplaceAllString(s, "address@")
	s = strings.ToLower(s)
	// Amazon SES wraps the receiver's reply in words of its own.
	s = strings.ReplaceAll(s, "unknown address error", "error")
	s = strings.NewReplacer("\u2019", "'", "`", "'", "\u00a0", " ").Replace(s)
	return strings.Join(strings.Fields(s), " ")
}

// reasonOfText is the first rule's reason whose words appear in the
// prepared text, or "".
func reasonOfText(text string) string {
	if text == "" {
		return ""
	}
	for i := range textRules {
		if textRules[i].matches(text) {
			return textRules[i].reason
		}
	}
	return ""
}
