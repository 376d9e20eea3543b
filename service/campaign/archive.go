package campaign

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
)

// Archive is the account's public archive (decisions.md 10): the single
// sends marked archive that were sent, readable by anyone who knows the
// archive's public id, without any recipient's data.
type Archive struct {
	db      *core.DB
	baseURL string
	now     func() time.Time
}

// NewArchive serves the archives of db's accounts under baseURL.
func NewArchive(db *core.DB, baseURL string, now func() time.Time) *Archive {
	return &Archive{db: db, baseURL: strings.TrimRight(baseURL, "/"), now: now}
}

// ArchivePageSize is how many sends one page of an archive (and its feed)
// holds.
const ArchivePageSize = 20

// ArchiveEntry is one archived send as lists and feeds show it.
type ArchiveEntry struct {
	Utr        string
	Subject    string
	Preheader  string
	SenderName string
	SentAt     time.Time
}

// ArchiveList is one page of an archive, newest send first.
type ArchiveList struct {
	PublicID string
	URL      string // the archive's absolute address
	Title    string // the newest send's sender name, or a neutral title
	Created  time.Time
	Entries  []ArchiveEntry
	Page     int  // 1-based
	More     bool // a next page exists
	// Brand is the account's organisation profile, heading the page.
	Brand core.Brand
}

// ArchivedSend is one archived send, rendered for anyone: placeholders of
// the contact empty, the sender's filled, no tracking, no unsubscribe
// link, no token.
type ArchivedSend struct {
	ArchiveEntry
	ArchiveURL string // the archive's absolute address
	Title      string // the archive's title
	HTML       string
	Brand      core.Brand // the account's organisation profile
}

// ArchiveURL is the absolute address of an archive's page.
func (a *Archive) ArchiveURL(publicID string) string { return a.baseURL + "/archive/" + publicID }

// EntryURL is the absolute address of one archived send.
func (a *Archive) EntryURL(publicID, utr string) string { return a.ArchiveURL(publicID) + "/" + utr }

// PublicID returns the account's archive id, made (random, 128 bits) the
// first time it is asked for; two processes asking at once get the same.
func (a *Archive) PublicID(ctx context.Context, accountID int64) (string, error) {
	var row models.ArchiveID
	err := a.db.R.WithContext(ctx).Where("user_id = ?", accountID).Take(&row).Error
	if err == nil {
		return row.PublicID, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return "", fmt.Errorf("archive: public id of account %d: %w", accountID, err)
	}
	row = models.ArchiveID{UserID: accountID, PublicID: newArchiveID(), CreatedAt: models.NewTimestamp(a.now())}
	if err := a.db.W.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row).Error; err != nil {
		return "", fmt.Errorf("archive: make the public id of account %d: %w", accountID, err)
	}
	if err := a.db.W.WithContext(ctx).Where("user_id = ?", accountID).Take(&row).Error; err != nil {
		return "", fmt.Errorf("archive: read the public id of account %d: %w", accountID, err)
	}
	return row.PublicID, nil
}

// URL is the absolute address of the account's archive (its id made on
// first use).
func (a *Archive) URL(ctx context.Context, accountID int64) (string, error) {
	id, err := a.PublicID(ctx, accountID)
	if err != nil {
		return "", err
	}
	return a.ArchiveURL(id), nil
}

// newArchiveID is 128 random bits in lower-case base32 (26 characters).
func newArchiveID() string { return strings.ToLower(rand.Text()) }

// owner finds the archive a public id names. Errors: ErrNotFound.
func (a *Archive) owner(ctx context.Context, publicID string) (*models.ArchiveID, error) {
	publicID = strings.TrimSpace(publicID)
	if publicID == "" || len(publicID) > 64 || !core.ValidText(publicID) {
		return nil, core.ErrNotFound
	}
	var row models.ArchiveID
	if err := a.db.R.WithContext(ctx).Where("public_id = ?", publicID).Take(&row).Error; err != nil {
		return nil, core.NotFoundOr(err, "archive: find")
	}
	return &row, nil
}

// archived narrows q to the account's sends of its archive: marked
// archive, not deleted, started and with a message delivered (sent_at
// set), automation steps left out. single_sends_archive serves it.
func archived(q *gorm.DB, accountID int64) *gorm.DB {
	return accountSends(q, accountID).Where("archive = 1 AND status IN ? AND sent_at IS NOT NULL",
		[]models.SendStatus{models.SendRunning, models.SendCompleted})
}

// archiveColumns are what a list reads of a send: never its design.
var archiveColumns = []string{"id", "utr", "subject", "preheader", "sender_name", "sent_at", "ab_subjects", "ab_preheaders", "ab_share", "ab_winner"}

// List returns page (1-based) of the archive publicID names, newest sent
// first. Errors: ErrNotFound (no such archive).
func (a *Archive) List(ctx context.Context, publicID string, page int) (*ArchiveList, error) {
	own, err := a.owner(ctx, publicID)
	if err != nil {
		return nil, err
	}
	if page < 1 {
		page = 1
	}
	if page > 10000 {
		return nil, core.ErrNotFound
	}
	var rows []models.SingleSend
	err = archived(a.db.R.WithContext(ctx).Model(&models.SingleSend{}), own.UserID).Select(archiveColumns).
		Order("sent_at DESC, id DESC").Offset((page - 1) * ArchivePageSize).Limit(ArchivePageSize + 1).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("archive: list of account %d: %w", own.UserID, err)
	}
	l := &ArchiveList{PublicID: own.PublicID, URL: a.ArchiveURL(own.PublicID), Created: own.CreatedAt.Time, Page: page}
	if len(rows) > ArchivePageSize {
		l.More, rows = true, rows[:ArchivePageSize]
	}
	org, err := core.OrgPlaceholderValues(ctx, a.db.R, own.UserID, a.baseURL)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		l.Entries = append(l.Entries, archiveEntry(&rows[i], org))
	}
	if l.Title, err = a.title(ctx, own.UserID, l.Entries, page); err != nil {
		return nil, err
	}
	if l.Brand, err = core.ReadBrand(ctx, a.db.R, own.UserID); err != nil {
		return nil, err
	}
	return l, nil
}

// Get returns one send of the archive publicID names, rendered without
// any recipient's data. Errors: ErrNotFound (no such archive, or no such
// archived and sent send in it).
func (a *Archive) Get(ctx context.Context, publicID, utr string) (*ArchivedSend, error) {
	own, err := a.owner(ctx, publicID)
	if err != nil {
		return nil, err
	}
	utr = strings.TrimSpace(utr)
	if utr == "" || len(utr) > 64 || !core.ValidText(utr) {
		return nil, core.ErrNotFound
	}
	var ss models.SingleSend
	if err := archived(a.db.R.WithContext(ctx).Model(&models.SingleSend{}), own.UserID).Where("utr = ?", utr).Take(&ss).Error; err != nil {
		return nil, core.NotFoundOr(err, "archive: get")
	}
	org, err := core.OrgPlaceholderValues(ctx, a.db.R, own.UserID, a.baseURL)
	if err != nil {
		return nil, err
	}
	out := &ArchivedSend{ArchiveEntry: archiveEntry(&ss, org), ArchiveURL: a.ArchiveURL(own.PublicID)}
	out.HTML = renderArchived(&ss, out.Preheader, a.EntryURL(own.PublicID, ss.Utr), org)
	if out.Brand, err = core.ReadBrand(ctx, a.db.R, own.UserID); err != nil {
		return nil, err
	}
	if out.Title, err = a.title(ctx, own.UserID, []ArchiveEntry{out.ArchiveEntry}, 2); err != nil {
		return nil, err
	}
	return out, nil
}

// archiveTitle is an archive's title when no send names its sender.
const archiveTitle = "Newsletter archive"

// title is the archive's title: the sender name of its newest send (the
// From name every recipient saw), read from entries when they are the
// first page.
func (a *Archive) title(ctx context.Context, accountID int64, entries []ArchiveEntry, page int) (string, error) {
	if page == 1 {
		if len(entries) > 0 && entries[0].SenderName != "" {
			return entries[0].SenderName, nil
		}
		return archiveTitle, nil
	}
	var names []*string
	err := archived(a.db.R.WithContext(ctx).Model(&models.SingleSend{}), accountID).
		Order("sent_at DESC, id DESC").Limit(1).Pluck("sender_name", &names).Error
	if err != nil {
		return "", fmt.Errorf("archive: title of account %d: %w", accountID, err)
	}
	if len(names) == 1 && names[0] != nil && strings.TrimSpace(*names[0]) != "" {
		return *names[0], nil
	}
	return archiveTitle, nil
}

// archiveEntry is what lists show of a send: its subject and preheader
// (an A/B test's winner's once chosen), placeholders of the contact
// empty.
func archiveEntry(ss *models.SingleSend, org map[string]string) ArchiveEntry {
	subject, preheader := ss.Subject, ss.Preheader
	if ss.ABShare > 0 && ss.ABWinner >= 1 && ss.ABWinner <= len(ss.ABSubjects) {
		subject = ss.ABSubjects[ss.ABWinner-1]
		if ss.ABWinner <= len(ss.ABPreheaders) && ss.ABPreheaders[ss.ABWinner-1] != "" {
			preheader = ss.ABPreheaders[ss.ABWinner-1]
		}
	}
	e := ArchiveEntry{Utr: ss.Utr, SentAt: ss.SentAt.Time.UTC()}
	if ss.SenderName != nil {
		e.SenderName = strings.TrimSpace(*ss.SenderName)
	}
	lookup := archiveLookup(ss, "", org)
	e.Subject = strings.TrimSpace(core.FlatLine(renderPlain(subject, lookup)))
	e.Preheader = strings.TrimSpace(core.FlatLine(renderPlain(preheader, lookup)))
	return e
}

// SetArchive marks one of the account's sends archive (on) or not,
// whatever its status: a send already sent may join the archive later.
// Errors: ErrNotFound.
func (a *Archive) SetArchive(ctx context.Context, accountID int64, utr string, on bool) error {
	if strings.TrimSpace(utr) == "" || !core.ValidText(utr) {
		return core.ErrNotFound
	}
	v := 0
	if on {
		v = 1
	}
	res := byUtr(a.db.W.WithContext(ctx).Model(&models.SingleSend{}), accountID, utr).
		Updates(map[string]any{"archive": v, "updated_at": models.NewTimestamp(a.now())})
	if res.Error != nil {
		return fmt.Errorf("archive: mark send %q: %w", utr, res.Error)
	}
	if res.RowsAffected == 0 {
		return core.ErrNotFound
	}
	return nil
}
