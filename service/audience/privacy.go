package audience

// Privacy requests (decisions.md 10): what herald holds on an address
// (the privacy export) and its erasure. An erased address is kept only as
// a keyed hash, in erasures and in place of the address in the rows of its
// history, so that it is never mailed or imported again until the person
// signs up again through a form (LiftErasure).

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
	"herald/service/identity"
	"herald/service/internal/record"
)

// MsgErased is the answer to an erased address added again (contacts/add,
// decisions.md 10); an import's report gives it for the rows it skips.
const MsgErased = "The email was erased at the person's request."

// ErasedPrefix starts the stand-in of an erased address in the rows that
// kept it: "erased:" and the address's keyed hash.
const ErasedPrefix = "erased:"

// erasureKeyName is the settings row of the erasure key.
const erasureKeyName = "erasure_key"

// Erasures hashes addresses with the server's erasure key and tells the
// account's erased addresses. The key (HMAC-SHA256, 32 random bytes in the
// settings table, shared by every process) is read once.
type Erasures struct {
	db       *core.DB
	settings *core.Settings

	mu  sync.Mutex
	key []byte
}

// Hash returns the hex HMAC-SHA256 of the normalised address under the
// erasure key.
func (e *Erasures) Hash(ctx context.Context, email string) (string, error) {
	return e.hashIn(ctx, nil, email)
}

// hashIn is Hash inside tx (nil: none): the key, made the first time, is
// then written inside the caller's transaction, which holds the writer.
func (e *Erasures) hashIn(ctx context.Context, tx *gorm.DB, email string) (string, error) {
	e.mu.Lock()
	key := e.key
	e.mu.Unlock()
	if key == nil {
		var v string
		var err error
		if tx != nil {
			v, err = e.settings.SecretIn(ctx, tx, erasureKeyName, 32)
		} else {
			v, err = e.settings.Secret(ctx, erasureKeyName, 32)
		}
		if err != nil {
			return "", fmt.Errorf("erasures: key: %w", err)
		}
		key = []byte(v)
		e.mu.Lock()
		e.key = key
		e.mu.Unlock()
	}
	return hashWith(key, email), nil
}

// ready reads the key ahead of a write transaction: made the first time,
// it is written through the writer, which the transaction would hold.
func (e *Erasures) ready(ctx context.Context) error {
	if e == nil {
		return nil
	}
	_, err := e.Hash(ctx, "")
	return err
}

func hashWith(key []byte, email string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(strings.ToLower(strings.TrimSpace(email))))
	return hex.EncodeToString(m.Sum(nil))
}

// erased reports whether the account erased the address (read through q,
// which may be a transaction).
func (e *Erasures) erased(ctx context.Context, q *gorm.DB, accountID int64, email string) (bool, error) {
	h, err := e.Hash(ctx, email)
	if err != nil {
		return false, err
	}
	var n int64
	if err := q.WithContext(ctx).Table("erasures").Where("user_id = ? AND email_hash = ?", accountID, h).Count(&n).Error; err != nil {
		return false, fmt.Errorf("erasures: is an address erased: %w", err)
	}
	return n > 0, nil
}

// erasedOf returns which of the addresses the account erased, in one
// query (an import's batch).
func (e *Erasures) erasedOf(ctx context.Context, accountID int64, emails []string) (map[string]bool, error) {
	if len(emails) == 0 {
		return nil, nil
	}
	// Most accounts erased no one: one look at the index then spares
	// hashing every address and sending the hashes.
	var any []int
	if err := e.db.R.WithContext(ctx).Raw("SELECT 1 FROM erasures WHERE user_id = ? LIMIT 1", accountID).Scan(&any).Error; err != nil {
		return nil, fmt.Errorf("erasures: does the account have erasures: %w", err)
	}
	if len(any) == 0 {
		return nil, nil
	}
	byHash := make(map[string]string, len(emails))
	hashes := make([]string, 0, len(emails))
	for _, a := range emails {
		h, err := e.Hash(ctx, a)
		if err != nil {
			return nil, err
		}
		byHash[h] = a
		hashes = append(hashes, h)
	}
	out := map[string]bool{}
	for _, part := range core.Chunks(hashes, core.BulkChunk) {
		var got []string
		if err := e.db.R.WithContext(ctx).Table("erasures").Where("user_id = ? AND email_hash IN ?", accountID, part).Pluck("email_hash", &got).Error; err != nil {
			return nil, fmt.Errorf("erasures: erased addresses of a batch: %w", err)
		}
		for _, h := range got {
			out[byHash[h]] = true
		}
	}
	return out, nil
}

// Privacy answers privacy requests: the export of what the account holds
// on an address, and its erasure.
type Privacy struct {
	db       *core.DB
	audit    *identity.Audit
	erasures *Erasures
	contacts *Contacts
}

// checkAddress validates the address of a privacy request.
func checkAddress(email string) (string, error) {
	p := core.Problems{}
	a, ok := core.NormalizeEmail(email)
	if p.Required("email", email) && !ok {
		p.AddReason("email", core.ReasonEmail, core.MsgEmail("email"))
	}
	return a, p.Err()
}

// Erased reports whether the account erased the address (and no form
// sign-up lifted it since). Errors: validation (email).
func (p *Privacy) Erased(ctx context.Context, accountID int64, email string) (bool, error) {
	a, err := checkAddress(email)
	if err != nil {
		return false, err
	}
	return p.erasures.erased(ctx, p.db.R, accountID, a)
}

// LiftErasure forgets the account's erasure of the address: the person
// signed up again through a form, so the address may be added, imported
// and mailed again. It is a no-op for an address never erased. tx, when
// not nil, is the caller's write transaction (the sign-up's). Errors:
// validation (email).
func (p *Privacy) LiftErasure(ctx context.Context, tx *gorm.DB, accountID int64, email string) error {
	a, err := checkAddress(email)
	if err != nil {
		return err
	}
	h, err := p.erasures.hashIn(ctx, tx, a)
	if err != nil {
		return err
	}
	if tx == nil {
		tx = p.db.W
	}
	if err := tx.WithContext(ctx).Exec("DELETE FROM erasures WHERE user_id = ? AND email_hash = ?", accountID, h).Error; err != nil {
		return fmt.Errorf("erasures: lift an erasure: %w", err)
	}
	return nil
}

// scrub is the SQL of a text column with every stored form of the address
// (as stored, lowercased by herald; URL-encoded in links) replaced by its
// stand-in. Its three parameters: scrubArgs.
func scrub(col string) string {
	return "REPLACE(REPLACE(" + col + ", ?, ?), ?, ?)"
}

func scrubArgs(email, marker string) []any {
	return []any{email, marker, url.QueryEscape(email), marker}
}

// Erase removes the address from the account (decisions.md 10): its
// contacts (with their field values and consent) are deleted, the hand-
// added segment rows and the outbox's copies too, and every other row of
// its history (the ledger, automation enrolments, event rows, reports,
// suppressions, unsubscribes, import reports, the audit log) keeps the
// address's keyed hash in its place. Queued mails to it are skipped and
// its automation enrolments end. The erasure is recorded (as the hash) so
// that contacts/add refuses the address and imports skip it, and written
// to the audit log. Erasing an address herald does not hold records the
// erasure all the same. Errors: validation (email).
func (p *Privacy) Erase(ctx context.Context, accountID int64, email string) error {
	a, err := checkAddress(email)
	if err != nil {
		return err
	}
	h, err := p.erasures.Hash(ctx, a)
	if err != nil {
		return err
	}
	marker := ErasedPrefix + h
	sc := scrubArgs(a, marker)
	pat := "%" + strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(a) + "%"
	d := p.db.SQL()
	now := p.db.Now()
	err = p.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		exec := func(what, q string, args ...any) error {
			if err := tx.Exec(q, args...).Error; err != nil {
				return fmt.Errorf("erase: %s: %w", what, err)
			}
			return nil
		}
		if err := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&models.Erasure{UserID: accountID, EmailHash: h, CreatedAt: models.NewTimestamp(now)}).Error; err != nil {
			return fmt.Errorf("erase: record the erasure: %w", err)
		}
		// The contacts of the address, deleted ones too (they keep it).
		var cs []struct {
			ID        int64
			DeletedAt *models.Timestamp
		}
		if err := tx.Table("contacts").Select("id, deleted_at").Where("user_id = ? AND email = ?", accountID, a).Scan(&cs).Error; err != nil {
			return fmt.Errorf("erase: contacts of the address: %w", err)
		}
		ids := make([]int64, 0, len(cs))
		live := int64(0)
		for _, c := range cs {
			ids = append(ids, c.ID)
			if c.DeletedAt == nil {
				live++
			}
		}
		if len(ids) > 0 {
			if err := exec("segment rows of its contacts", "DELETE FROM segment_emails WHERE contact_id IN ?", ids); err != nil {
				return err
			}
			if err := exec("its contacts", "DELETE FROM contacts WHERE user_id = ? AND id IN ?", accountID, ids); err != nil {
				return err
			}
		}
		if live > 0 {
			if err := record.AddDaily(tx, accountID, now, record.Daily{record.DailyContactsRemoved: live}); err != nil {
				return err
			}
		}
		// Another contact's second address.
		if err := exec("second addresses", "UPDATE contacts SET alt_email = NULL WHERE user_id = ? AND alt_email = ?", accountID, a); err != nil {
			return err
		}
		if err := exec("hand-added segment rows", "DELETE FROM segment_emails WHERE segment_id IN (SELECT id FROM segments WHERE user_id = ?) AND contact_id IS NULL AND email = ?", accountID, a); err != nil {
			return err
		}
		// Mails still queued are not sent; the rest keep their outcome.
		if err := exec("queued mails", "UPDATE send_messages SET state = ?, error = ? WHERE email = ? AND user_id = ? AND state = ?",
			models.MessageSkipped, "Erased at the person's request.", a, accountID, models.MessageQueued); err != nil {
			return err
		}
		if err := exec("the ledger", "UPDATE send_messages SET email = ?, first_name = '', last_name = '', error = "+scrub("error")+" WHERE email = ? AND user_id = ?",
			append(append([]any{marker}, sc...), a, accountID)...); err != nil {
			return err
		}
		if err := exec("automation enrolments", "UPDATE automation_contacts SET email = ?, first_name = '', last_name = '', state = CASE WHEN state = ? THEN ? ELSE state END, updated_at = ? "+
			"WHERE automation_id IN (SELECT id FROM automations WHERE user_id = ?) AND email = ?",
			marker, models.EnrolActive, models.EnrolExited, now, accountID, a); err != nil {
			return err
		}
		if err := exec("event rows", "UPDATE events SET email = ?, url = "+scrub("url")+", reason = "+scrub("reason")+" WHERE user_id = ? AND email = ?",
			append(append(append([]any{marker}, sc...), sc...), accountID, a)...); err != nil {
			return err
		}
		for _, t := range []string{"feedback", "suppressions", "lifted_suppressions"} {
			if err := exec(t, "UPDATE "+t+" SET email = ?, diagnostic = "+scrub("diagnostic")+" WHERE user_id = ? AND email = ?",
				append(append([]any{marker}, sc...), accountID, a)...); err != nil {
				return err
			}
		}
		if err := exec("unsubscribes", "UPDATE unsubscribers SET email_address = ? WHERE user_id = ? AND email_address = ?", marker, accountID, a); err != nil {
			return err
		}
		if err := exec("outbox copies", "DELETE FROM outbox_messages WHERE user_id = ? AND rcpt_to = ?", accountID, a); err != nil {
			return err
		}
		// Reports tied to no account name the address too.
		if err := exec("untied reports", "UPDATE untied_reports SET email = ?, why = "+scrub("why")+" WHERE email = ?",
			append(append([]any{marker}, sc...), a)...); err != nil {
			return err
		}
		if err := exec("the audit log", "UPDATE audit_log SET target = "+scrub("target")+", detail = "+scrub("detail")+
			` WHERE user_id = ? AND (LOWER(target) LIKE ? ESCAPE '\' OR LOWER(detail) LIKE ? ESCAPE '\')`,
			append(append(append([]any{}, sc...), sc...), accountID, pat, pat)...); err != nil {
			return err
		}
		if err := exec("import reports", "UPDATE imports SET problems = "+scrub("problems")+` WHERE user_id = ? AND problems LIKE ? ESCAPE '\'`,
			append(append([]any{}, sc...), accountID, pat)...); err != nil {
			return err
		}
		// Finished exports are files: one that holds the address goes.
		contains := "instr(data, CAST(? AS BLOB)) > 0"
		if d.Postgres {
			contains = "position(convert_to(?, 'UTF8') in data) > 0"
		}
		return exec("exports holding the address", "DELETE FROM export_jobs WHERE user_id = ? AND id IN (SELECT export_id FROM export_parts WHERE "+contains+")", accountID, a)
	})
	if err != nil {
		return core.Wrapf(err, "privacy: erase")
	}
	return p.audit.Record(ctx, accountID, core.AuditContactErased, marker, "erased at the person's request")
}

// PrivacyExport is the head of a privacy export; Write adds the rest.
type PrivacyExport struct {
	Email  string
	Erased bool
}

// StartExport checks a privacy export of the address and writes it to the
// audit log; the export itself is written by WriteExport (streamed, past
// the request's answer). Errors: validation (email).
func (p *Privacy) StartExport(ctx context.Context, accountID int64, email string) (PrivacyExport, error) {
	a, err := checkAddress(email)
	if err != nil {
		return PrivacyExport{}, err
	}
	erased, err := p.erasures.erased(ctx, p.db.R, accountID, a)
	if err != nil {
		return PrivacyExport{}, err
	}
	h, err := p.erasures.Hash(ctx, a)
	if err != nil {
		return PrivacyExport{}, err
	}
	// The log names the hash, not the address: an erasure later would
	// leave it there otherwise.
	if err := p.audit.Record(ctx, accountID, core.AuditContactExported, "hash:"+h[:16], "privacy export of an address"); err != nil {
		return PrivacyExport{}, err
	}
	return PrivacyExport{Email: a, Erased: erased}, nil
}

// exportMail is one mail of the address as the privacy export shows it.
type exportMail struct {
	ID             int64             `json:"id"`
	SendUtr        string            `json:"send_utr"`
	SendName       string            `json:"send_name"`
	Subject        string            `json:"subject"`
	AutomationUtr  *string           `json:"automation_utr"`
	AutomationName *string           `json:"automation_name"`
	State          string            `json:"state"`
	Error          string            `json:"error,omitempty"`
	SentAt         *models.Timestamp `json:"sent_at"`
	Events         []exportMailEvent `json:"events"`
	MoreEvents     int               `json:"more_events,omitempty"`
	Opened         *models.Timestamp `json:"opened_at"`
	Clicked        *models.Timestamp `json:"clicked_at"`
	Unsubscribed   *models.Timestamp `json:"unsubscribed_at"`
	HardBounced    *models.Timestamp `json:"hard_bounced_at"`
	SoftBounced    *models.Timestamp `json:"soft_bounced_at"`
	Complained     *models.Timestamp `json:"complained_at"`
}

type exportMailEvent struct {
	Kind       string            `json:"kind"`
	At         *models.Timestamp `json:"at"`
	Machine    bool              `json:"machine,omitempty"`
	URL        string            `json:"url,omitempty"`
	Status     string            `json:"status,omitempty"`
	Diagnostic string            `json:"diagnostic,omitempty"`
	Source     string            `json:"source,omitempty"`
}

var messageStates = map[models.MessageState]string{
	models.MessageQueued: "queued", models.MessageClaimed: "sending", models.MessageDelivered: "delivered",
	models.MessageBounced: "bounced", models.MessageSkipped: "skipped", models.MessageBlocked: "blocked", models.MessageFailed: "failed",
}

// exportPage is how many mails the export reads at once.
const exportPage = maxHistoryPage

// WriteExport writes everything the account holds on the address as one
// JSON object: its contacts (fields and consent, deleted ones too), its
// mails (sends and automation emails, newest first, each with its outcome,
// opens and clicks, reports and unsubscribe), its automation enrolments,
// its reports, unsubscribes and suppressions. Rows are read in batches and
// written as they come: memory does not grow with the history. An error
// after the first byte can only cut the document short.
func (p *Privacy) WriteExport(ctx context.Context, accountID int64, head PrivacyExport, out io.Writer) error {
	w := bufio.NewWriterSize(out, 32<<10)
	a := head.Email
	put := func(v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	list := func(name string, each func(emit func(v any) error) error) error {
		if _, err := w.WriteString(`,"` + name + `":[`); err != nil {
			return err
		}
		first := true
		err := each(func(v any) error {
			if !first {
				if err := w.WriteByte(','); err != nil {
					return err
				}
			}
			first = false
			return put(v)
		})
		if err != nil {
			return err
		}
		_, err = w.WriteString("]")
		return err
	}
	if _, err := w.WriteString(`{"email":`); err != nil {
		return err
	}
	if err := put(a); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, `,"erased":%t`, head.Erased); err != nil {
		return err
	}
	r := p.db.R.WithContext(ctx)
	err := list("contacts", func(emit func(any) error) error {
		customs, err := customFields(ctx, p.db.R, accountID)
		if err != nil {
			return err
		}
		var cs []models.Contact
		if err := r.Where("user_id = ? AND (email = ? OR alt_email = ?)", accountID, a, a).Order("id").Find(&cs).Error; err != nil {
			return fmt.Errorf("privacy export: contacts: %w", err)
		}
		for i := range cs {
			ct, _ := contactType(ctx, p.db.R, accountID, cs[i].ContactTypeID)
			if err := emit(view(&cs[i], customs, ct)); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = list("mails", func(emit func(any) error) error {
			before := int64(0)
			for {
				mails, err := p.contacts.mailsOf(ctx, accountID, a, before, exportPage)
				if err != nil {
					return err
				}
				for i := range mails {
					if err := emit(exportMailOf(&mails[i])); err != nil {
						return err
					}
				}
				if len(mails) < exportPage {
					return nil
				}
				before = mails[len(mails)-1].ID
			}
		})
	}
	if err == nil {
		err = list("automation_enrolments", func(emit func(any) error) error {
			var rows []struct {
				AutomationUtr  string            `json:"automation_utr"`
				AutomationName string            `json:"automation_name"`
				Step           int               `json:"step"`
				State          int               `json:"state"`
				EnrolledAt     *models.Timestamp `json:"enrolled_at"`
			}
			if err := r.Raw(`SELECT a.utr AS automation_utr, a.automation_name, e.step, e.state, e.enrolled_at FROM automation_contacts e
				JOIN automations a ON a.id = e.automation_id WHERE a.user_id = ? AND e.email = ? ORDER BY e.id`, accountID, a).Scan(&rows).Error; err != nil {
				return fmt.Errorf("privacy export: automation enrolments: %w", err)
			}
			for i := range rows {
				if err := emit(rows[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = list("reports", func(emit func(any) error) error {
			return core.Each(ctx, core.ListFilter{}, "", func() *gorm.DB {
				return p.db.R.Model(&models.Feedback{}).Where("user_id = ? AND email = ?", accountID, a)
			}, func(f *models.Feedback) int64 { return f.ID }, func(f *models.Feedback) error { return emit(f) })
		})
	}
	if err == nil {
		err = list("unsubscribes", func(emit func(any) error) error {
			var rows []struct {
				GroupID   *int64            `json:"group_id"`
				GroupName *string           `json:"group_name"`
				CreatedAt *models.Timestamp `json:"created_at"`
			}
			if err := r.Raw(`SELECT u.unsubscribe_groups_id AS group_id, g.group_name, u.created_at FROM unsubscribers u
				LEFT JOIN unsubscribe_groups g ON g.id = u.unsubscribe_groups_id WHERE u.user_id = ? AND u.email_address = ? ORDER BY u.id`, accountID, a).Scan(&rows).Error; err != nil {
				return fmt.Errorf("privacy export: unsubscribes: %w", err)
			}
			for i := range rows {
				if err := emit(rows[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err == nil {
		err = list("suppressions", func(emit func(any) error) error {
			var rows []models.Suppression
			if err := r.Where("user_id = ? AND email = ?", accountID, a).Order("id").Find(&rows).Error; err != nil {
				return fmt.Errorf("privacy export: suppressions: %w", err)
			}
			for i := range rows {
				if err := emit(rows[i]); err != nil {
					return err
				}
			}
			var lifted []models.LiftedSuppression
			if err := r.Where("user_id = ? AND email = ?", accountID, a).Order("id").Find(&lifted).Error; err != nil {
				return fmt.Errorf("privacy export: lifted suppressions: %w", err)
			}
			for i := range lifted {
				if err := emit(lifted[i]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	if _, err := w.WriteString("}\n"); err != nil {
		return err
	}
	return w.Flush()
}

func exportMailOf(m *record.ContactMail) exportMail {
	out := exportMail{ID: m.ID, SendUtr: m.SendUtr, SendName: m.SendName, Subject: m.Subject, AutomationUtr: m.AutomationUtr,
		AutomationName: m.AutomationName, State: messageStates[m.State], Error: m.Error, SentAt: m.SentAt, MoreEvents: m.MoreEvents,
		Opened: m.OpenedAt, Clicked: m.ClickedAt, Unsubscribed: m.UnsubscribedAt, HardBounced: m.HardBouncedAt,
		SoftBounced: m.SoftBouncedAt, Complained: m.ComplainedAt, Events: make([]exportMailEvent, 0, len(m.Events))}
	for _, e := range m.Events {
		out.Events = append(out.Events, exportMailEvent{Kind: e.Kind, At: e.At, Machine: e.Machine, URL: e.URL, Status: e.Status, Diagnostic: e.Diagnostic, Source: e.Source})
	}
	return out
}

// UnconfirmedFor is how long a contact may stay unconfirmed (double
// opt-in) before it is deleted (decisions.md 10).
const UnconfirmedFor = 30 * 24 * time.Hour

// purgeBatch is how many unconfirmed contacts one transaction deletes.
const purgeBatch = 1000

// PurgeUnconfirmed deletes, across accounts, the contacts unconfirmed for
// longer than UnconfirmedFor on the service's clock, with their segment
// rows, a batch per transaction (the scheduler's purge round). It returns
// how many it deleted.
func (s *Contacts) PurgeUnconfirmed(ctx context.Context) (int64, error) {
	before := s.db.Now().Add(-UnconfirmedFor)
	var total int64
	for {
		var rows []struct {
			ID        int64
			UserID    int64
			DeletedAt *models.Timestamp
		}
		if err := s.db.R.WithContext(ctx).Table("contacts").Select("id, user_id, deleted_at").
			Where("status = ? AND created_at < ?", models.ContactUnconfirmed, before).Order("created_at").Limit(purgeBatch).Scan(&rows).Error; err != nil {
			return total, fmt.Errorf("contacts: unconfirmed contacts to delete: %w", err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		ids := make([]int64, len(rows))
		removed := map[int64]int64{}
		for i, r := range rows {
			ids[i] = r.ID
			if r.DeletedAt == nil {
				removed[r.UserID]++
			}
		}
		now := s.db.Now()
		err := s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("DELETE FROM segment_emails WHERE contact_id IN ?", ids).Error; err != nil {
				return fmt.Errorf("segment rows: %w", err)
			}
			// The status is read again: a contact that confirmed meanwhile stays.
			if err := tx.Exec("DELETE FROM contacts WHERE id IN ? AND status = ?", ids, models.ContactUnconfirmed).Error; err != nil {
				return fmt.Errorf("contacts: %w", err)
			}
			for acct, n := range removed {
				if err := record.AddDaily(tx, acct, now, record.Daily{record.DailyContactsRemoved: n}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return total, core.Wrapf(err, "contacts: delete unconfirmed contacts")
		}
		total += int64(len(rows))
		if len(rows) < purgeBatch {
			return total, nil
		}
	}
}
