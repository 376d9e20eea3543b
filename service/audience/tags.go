package audience

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
)

// Tags on contacts (decisions.md 10). A tag is stored normalised:
// surrounding spaces trimmed and lower-cased (NormaliseTag), so "VIP",
// " vip" and "vip" are one tag, shown as "vip"; segment conditions compare
// their value in the same form. One row per tag a contact carries
// (contact_tags), deleted with the contact.

// Limits of tags: characters per tag, tags per contact.
const (
	MaxTagLen         = 64
	MaxTagsPerContact = 100
)

// tagRows is how many rows one insert of tags binds (3 values a row):
// under SQLite's 32,766 variables and PostgreSQL's 65,535.
const tagRows = 5000

// TagsInput is the body of contacts/tags/add and contacts/tags/remove:
// the contacts by address (every contact of the account with that
// address, in any contact type) and/or by id, and the tags.
type TagsInput struct {
	Emails []string
	IDs    []string
	Tags   []string
}

// NormaliseTag is the stored form of a tag: trimmed, lower-cased.
func NormaliseTag(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// SplitTags reads tags written in one text, separated by `;` (a CSV
// column, the console's field), dropping empty ones.
func SplitTags(s string) []string {
	var out []string
	for _, t := range strings.Split(s, ";") {
		if strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// cleanTags validates tags given under field (items field.N) and returns
// them normalised, without repeats. It reports the problems in p.
func cleanTags(field string, raw []string, p core.Problems) []string {
	if len(raw) == 0 {
		p.AddReason(field, core.ReasonRequired, core.MsgRequired(field))
		return nil
	}
	if len(raw) > MaxTagsPerContact {
		p.Merge(core.TooManyItems(field, MaxTagsPerContact))
		return nil
	}
	seen := make(map[string]bool, len(raw))
	out := make([]string, 0, len(raw))
	for i, r := range raw {
		key := fmt.Sprintf("%s.%d", field, i)
		if reason := tagProblem(key, r, p); reason {
			continue
		}
		t := NormaliseTag(r)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// tagProblem records in p what is wrong with one tag under key, and
// reports whether anything was.
func tagProblem(key, raw string, p core.Problems) bool {
	t := NormaliseTag(raw)
	switch {
	case !utf8.ValidString(t):
		p.Merge(core.NotUTF8(key))
	case t == "":
		p.AddReason(key, core.ReasonMin, core.MsgMin(key, 1))
	case utf8.RuneCountInString(t) > MaxTagLen:
		p.AddReason(key, core.ReasonMax, core.MsgMax(key, MaxTagLen))
	case core.HasControl(t):
		p.AddReason(key, core.ReasonLineBreak, core.MsgLineBreak(key))
	default:
		return false
	}
	return true
}

// msgTooManyTags refuses a change that would leave a contact with more
// than MaxTagsPerContact tags.
var msgTooManyTags = fmt.Sprintf("A contact may not have more than %d tags.", MaxTagsPerContact)

// tagTarget is a contact a tag change applies to.
type tagTarget struct {
	ID            int64
	ContactTypeID int64
}

// checkTagsInput validates the body of a tag change (no database access).
func checkTagsInput(in TagsInput) (emails []string, ids []int64, tags []string, err error) {
	p := core.Problems{}
	if len(in.Emails) == 0 && len(in.IDs) == 0 {
		// Either list names the contacts; the message names the first.
		p.AddReason("emails", core.ReasonRequired, core.MsgRequired("emails"))
	}
	if len(in.Emails) > core.MaxBulkIDs {
		p.Merge(core.TooManyItems("emails", core.MaxBulkIDs))
	} else {
		seen := map[string]bool{}
		for i, e := range in.Emails {
			addr, ok := core.NormalizeEmail(e)
			if !ok {
				key := fmt.Sprintf("emails.%d", i)
				p.AddReason(key, core.ReasonEmail, core.MsgEmail(key))
				continue
			}
			if !seen[addr] {
				seen[addr] = true
				emails = append(emails, addr)
			}
		}
	}
	if len(in.IDs) > core.MaxBulkIDs {
		p.Merge(core.TooManyItems("ids", core.MaxBulkIDs))
	}
	tags = cleanTags("tags", in.Tags, p)
	if err := p.Err(); err != nil {
		return nil, nil, nil, err
	}
	if len(in.IDs) > 0 {
		// A malformed id names no contact: not found, as bulk delete says.
		if ids, err = core.ParseIDs("ids", in.IDs); err != nil {
			return nil, nil, nil, err
		}
	}
	return emails, ids, tags, nil
}

// tagTargets finds the account's live contacts named by ids and emails.
// Errors: ErrNotFound when any id or address names none (another
// account's contacts included: they are not the caller's to know of).
func tagTargets(ctx context.Context, tx *gorm.DB, accountID int64, emails []string, ids []int64) ([]tagTarget, error) {
	byID := map[int64]tagTarget{}
	for _, part := range core.Chunks(ids, core.BulkChunk) {
		var got []tagTarget
		if err := tx.WithContext(ctx).Model(&models.Contact{}).Select("id", "contact_type_id").
			Where("user_id = ? AND id IN ? AND deleted_at IS NULL", accountID, part).Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("tags: contacts by id: %w", err)
		}
		if len(got) != len(part) {
			return nil, core.ErrNotFound
		}
		for _, t := range got {
			byID[t.ID] = t
		}
	}
	for _, part := range core.Chunks(emails, core.BulkChunk) {
		var got []struct {
			ID            int64
			ContactTypeID int64
			Email         string
		}
		// contacts_type_email (contact_type_id, email) per type of the account.
		if err := tx.WithContext(ctx).Model(&models.Contact{}).Select("id", "contact_type_id", "email").
			Where("contact_type_id IN (SELECT id FROM contact_types WHERE user_id = ?) AND user_id = ? AND email IN ? AND deleted_at IS NULL",
				accountID, accountID, part).Scan(&got).Error; err != nil {
			return nil, fmt.Errorf("tags: contacts by address: %w", err)
		}
		found := make(map[string]bool, len(got))
		for _, g := range got {
			found[g.Email] = true
			byID[g.ID] = tagTarget{ID: g.ID, ContactTypeID: g.ContactTypeID}
		}
		if len(found) != len(part) {
			return nil, core.ErrNotFound
		}
	}
	out := make([]tagTarget, 0, len(byID))
	for _, t := range byID {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// AddTags adds the tags to every contact named, all or none, and brings
// the segments that test tags up to date (an automation whose target is
// such a segment then enrols the contacts that entered it). Tags a contact
// has already stay as they are. It returns how many contacts were named.
// Errors: validation (the body; a contact that would carry more than
// MaxTagsPerContact tags), ErrNotFound (an id or address that names no
// contact of the account).
func (s *Contacts) AddTags(ctx context.Context, accountID int64, in TagsInput) (int, error) {
	return s.changeTags(ctx, accountID, in, true)
}

// RemoveTags removes the tags from every contact named, all or none, and
// brings the segments that test tags up to date. Tags a contact does not
// have are passed over. Errors: as AddTags, without the limit.
func (s *Contacts) RemoveTags(ctx context.Context, accountID int64, in TagsInput) (int, error) {
	return s.changeTags(ctx, accountID, in, false)
}

func (s *Contacts) changeTags(ctx context.Context, accountID int64, in TagsInput, add bool) (int, error) {
	emails, ids, tags, err := checkTagsInput(in)
	if err != nil {
		return 0, err
	}
	verb := "remove"
	if add {
		verb = "add"
	}
	var n int
	err = s.db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		targets, err := tagTargets(ctx, tx, accountID, emails, ids)
		if err != nil {
			return err
		}
		n = len(targets)
		contactIDs := make([]int64, len(targets))
		for i, t := range targets {
			contactIDs[i] = t.ID
		}
		if add {
			err = addTags(ctx, tx, accountID, contactIDs, tags, true)
		} else {
			err = removeTags(ctx, tx, accountID, contactIDs, tags)
		}
		if err != nil {
			return err
		}
		byType := map[int64][]int64{}
		for _, t := range targets {
			byType[t.ContactTypeID] = append(byType[t.ContactTypeID], t.ID)
		}
		for typeID, list := range byType {
			for _, part := range core.Chunks(list, core.BulkChunk) {
				if err := s.segments.refreshTagged(ctx, tx, accountID, typeID, contactSet{test: "IN ?", arg: part}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, core.Wrapf(err, "tags: %s", verb)
	}
	return n, nil
}

// addTags gives each contact of ids (the account's) the tags it lacks.
// strict: a contact that would pass MaxTagsPerContact fails the whole
// change (validation); otherwise (an import) only the tags that still fit
// are added, in the order given.
func addTags(ctx context.Context, tx *gorm.DB, accountID int64, ids []int64, tags []string, strict bool) error {
	if len(tags) == 0 {
		return nil
	}
	return addTagsOf(ctx, tx, accountID, ids, func(int64) []string { return tags }, strict)
}

// addTagsOf is addTags with each contact's own tags.
func addTagsOf(ctx context.Context, tx *gorm.DB, accountID int64, ids []int64, tagsFor func(id int64) []string, strict bool) error {
	if len(ids) == 0 {
		return nil
	}
	type row struct {
		contactID int64
		tag       string
	}
	var rows []row
	for _, part := range core.Chunks(ids, core.BulkChunk) {
		have, err := existingTags(ctx, tx, accountID, part)
		if err != nil {
			return err
		}
		for _, id := range part {
			own := have[id]
			n := len(own)
			for _, t := range tagsFor(id) {
				if own[t] {
					continue
				}
				if n >= MaxTagsPerContact {
					if strict {
						return core.InvalidBecause("tags", core.ReasonMax, msgTooManyTags)
					}
					break
				}
				n++
				rows = append(rows, row{id, t})
			}
		}
		// A later chunk over the limit rolls these back with the
		// caller's transaction.
		if err := insertTagRows(ctx, tx, accountID, rows, func(r row) (int64, string) { return r.contactID, r.tag }); err != nil {
			return err
		}
		rows = rows[:0]
	}
	return nil
}

// insertTagRows writes rows, tagRows per statement.
func insertTagRows[T any](ctx context.Context, tx *gorm.DB, accountID int64, rows []T, of func(T) (int64, string)) error {
	for _, part := range core.Chunks(rows, tagRows) {
		var b strings.Builder
		b.WriteString("INSERT INTO contact_tags (contact_id, tag, user_id) VALUES ")
		args := make([]any, 0, 3*len(part))
		for i, r := range part {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("(?, ?, ?)")
			id, tag := of(r)
			args = append(args, id, tag, accountID)
		}
		b.WriteString(" ON CONFLICT (contact_id, tag) DO NOTHING")
		if err := tx.WithContext(ctx).Exec(b.String(), args...).Error; err != nil {
			return fmt.Errorf("tags: add %d tags: %w", len(part), err)
		}
	}
	return nil
}

// existingTags reads the tags the contacts ids (at most a chunk) carry.
func existingTags(ctx context.Context, tx *gorm.DB, accountID int64, ids []int64) (map[int64]map[string]bool, error) {
	var got []struct {
		ContactID int64
		Tag       string
	}
	if err := tx.WithContext(ctx).Raw("SELECT contact_id, tag FROM contact_tags WHERE contact_id IN ? AND user_id = ?", ids, accountID).
		Scan(&got).Error; err != nil {
		return nil, fmt.Errorf("tags: tags of %d contacts: %w", len(ids), err)
	}
	out := make(map[int64]map[string]bool, len(ids))
	for _, g := range got {
		if out[g.ContactID] == nil {
			out[g.ContactID] = map[string]bool{}
		}
		out[g.ContactID][g.Tag] = true
	}
	return out, nil
}

// removeTags takes the tags off the contacts ids (the account's).
func removeTags(ctx context.Context, tx *gorm.DB, accountID int64, ids []int64, tags []string) error {
	for _, part := range core.Chunks(ids, core.BulkChunk) {
		if err := tx.WithContext(ctx).Exec("DELETE FROM contact_tags WHERE contact_id IN ? AND tag IN ? AND user_id = ?", part, tags, accountID).Error; err != nil {
			return fmt.Errorf("tags: remove tags of %d contacts: %w", len(part), err)
		}
	}
	return nil
}

// dropTags removes every tag of the contacts ids (deleted contacts).
func dropTags(ctx context.Context, tx *gorm.DB, accountID int64, ids []int64) error {
	if err := tx.WithContext(ctx).Exec("DELETE FROM contact_tags WHERE contact_id IN ? AND user_id = ?", ids, accountID).Error; err != nil {
		return fmt.Errorf("tags: drop the tags of %d deleted contacts: %w", len(ids), err)
	}
	return nil
}

// tagsOf reads the tags of the contacts ids (a page of a list, at most
// core.BatchSize) in one query per chunk, each contact's sorted. Sorted
// here, not by the database: SQLite and PostgreSQL collate differently.
func tagsOf(ctx context.Context, q *gorm.DB, accountID int64, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	for _, part := range core.Chunks(ids, core.BulkChunk) {
		rows, err := q.WithContext(ctx).Raw("SELECT contact_id, tag FROM contact_tags WHERE contact_id IN ? AND user_id = ?", part, accountID).Rows()
		if err != nil {
			return nil, fmt.Errorf("tags: tags of %d contacts: %w", len(part), err)
		}
		for rows.Next() {
			var id int64
			var tag string
			if err := rows.Scan(&id, &tag); err != nil {
				rows.Close()
				return nil, fmt.Errorf("tags: tags of %d contacts: %w", len(part), err)
			}
			out[id] = append(out[id], tag)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("tags: tags of %d contacts: %w", len(part), err)
		}
	}
	for _, ts := range out {
		sort.Strings(ts)
	}
	return out, nil
}

// maxTagNames bounds the list of an account's tags the console offers.
const maxTagNames = 1000

// TagNames returns the account's tags in use, sorted (at most 1,000: the
// console offers them as choices).
func (s *Contacts) TagNames(ctx context.Context, accountID int64) ([]string, error) {
	var out []string
	// contact_tags_tag (user_id, tag, …): a walk of the account's tags.
	if err := s.db.R.WithContext(ctx).Raw("SELECT DISTINCT tag FROM contact_tags WHERE user_id = ? ORDER BY tag LIMIT ?", accountID, maxTagNames).
		Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("tags: tags of account %d: %w", accountID, err)
	}
	sort.Strings(out)
	return out, nil
}

// tagListSQL is the contact's tags as one text ("a, b"), over contacts
// aliased c: what Explain shows beside a tags condition.
func tagListSQL(d core.Dialect) string {
	if d.Postgres {
		return "(SELECT string_agg(t.tag, ', ' ORDER BY t.tag COLLATE \"C\") FROM contact_tags t WHERE t.contact_id = c.id AND t.user_id = c.user_id)"
	}
	return "(SELECT group_concat(tag, ', ') FROM (SELECT t.tag FROM contact_tags t WHERE t.contact_id = c.id AND t.user_id = c.user_id ORDER BY t.tag))"
}

// tagSQL tests whether the contact aliased c carries the tag (a bound
// value), by the primary key of contact_tags.
const tagSQL = "EXISTS (SELECT 1 FROM contact_tags t WHERE t.contact_id = c.id AND t.tag = ? AND t.user_id = c.user_id)"

// importTags adds the tags of an import batch's rows to their contacts
// (by address, in the import's contact type), inside the batch's
// transaction and before its segments are refreshed. Tags that would
// take a contact past MaxTagsPerContact are left out.
func importTags(ctx context.Context, tx *gorm.DB, imp *models.Import, batch []importRow) error {
	want := map[string][]string{}
	for i := range batch {
		if len(batch[i].tags) > 0 {
			want[batch[i].c.Email] = batch[i].tags
		}
	}
	if len(want) == 0 {
		return nil
	}
	emails := make([]string, 0, len(want))
	for e := range want {
		emails = append(emails, e)
	}
	byID := make(map[int64][]string, len(want))
	ids := make([]int64, 0, len(want))
	for _, part := range core.Chunks(emails, core.BulkChunk) {
		var got []struct {
			ID    int64
			Email string
		}
		if err := tx.WithContext(ctx).Raw("SELECT id, email FROM contacts WHERE contact_type_id = ? AND email IN ? AND deleted_at IS NULL AND user_id = ?",
			imp.ContactTypeID, part, imp.UserID).Scan(&got).Error; err != nil {
			return fmt.Errorf("tags: contacts of an import batch: %w", err)
		}
		for _, g := range got {
			byID[g.ID] = want[g.Email]
			ids = append(ids, g.ID)
		}
	}
	return addTagsOf(ctx, tx, imp.UserID, ids, func(id int64) []string { return byID[id] }, false)
}

// rowTags reads the tags cell of an import row (tags separated by `;`).
// It returns the reason when the row is rejected.
func rowTags(cell string) ([]string, string) {
	raw := SplitTags(cell)
	if len(raw) == 0 {
		return nil, ""
	}
	p := core.Problems{}
	tags := cleanTags("tags", raw, p)
	if len(p) > 0 {
		var msgs []string
		for k := range p {
			msgs = append(msgs, p.Messages(k)...)
		}
		sort.Strings(msgs)
		return nil, strings.Join(msgs, " ")
	}
	return tags, ""
}

// mergeTags is the union of two rows' tags, in order.
func mergeTags(a, b []string) []string {
	if len(a) == 0 {
		return b
	}
	out := append([]string{}, a...)
	for _, t := range b {
		if !hasString(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// ForTag returns the segment of the contact type whose one condition is
// `tags contains <tag>`, made ("Tagged <tag>") when the type has none: an
// automation whose target it is starts for each contact when the tag is
// added to it (the automations round enrols the contacts that enter its
// target). Errors: validation (key tag; contact_type_id), ErrNotFound
// (contact type).
func (s *Segments) ForTag(ctx context.Context, accountID int64, contactTypeID, tag string) (*models.Segment, error) {
	p := core.Problems{}
	if p.Required("tag", tag) {
		tagProblem("tag", tag, p)
	}
	p.Required("contact_type_id", contactTypeID)
	if err := p.Err(); err != nil {
		return nil, err
	}
	t := NormaliseTag(tag)
	typeID, err := core.ParseID(contactTypeID)
	if err != nil {
		return nil, err
	}
	var segs []models.Segment
	if err := s.db.R.WithContext(ctx).Where("user_id = ? AND contact_type_id = ? AND deleted_at IS NULL", accountID, typeID).
		Order("id").Find(&segs).Error; err != nil {
		return nil, core.Wrapf(err, "tags: segments of contact type %d", typeID)
	}
	for i := range segs {
		g := &segs[i]
		if len(g.SelectField) == 1 && g.SelectField[0] == "tags" && len(g.SelectOperator) == 1 && g.SelectOperator[0] == "contains" &&
			len(g.Value) == 1 && NormaliseTag(g.Value[0]) == t {
			return g, nil
		}
	}
	return s.Create(ctx, accountID, SegmentInput{ContactTypeID: contactTypeID, SegmentName: "Tagged " + t,
		SelectField: []string{"tags"}, SelectOperator: []string{"contains"}, Value: []string{t}})
}
