package service

import (
	"context"
	"mime"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/delivery"
	"herald/models"
)

// The mail's own identity headers (issue 14): List-Id names the contact
// type or segment a campaign goes to (RFC 2919), so that receivers and
// their users can tell one list from another and filter it; Feedback-ID
// (Gmail's feedback loop) names the campaign, the account and herald, so
// that Postmaster Tools reports complaint rates per campaign and per
// account. Both are signed with DKIM (delivery.SignedHeaders): Gmail
// trusts a Feedback-ID only under the signature of the sending domain.

// identityHeaders are a send's List-Id and Feedback-ID. The list is the
// send's first target (a send to several lists is named by its first;
// an automation email by the automation's target); none when the target
// is gone or unknown. Errors: the database's.
func identityHeaders(ctx context.Context, q *gorm.DB, ss *models.SingleSend, fromDomain string) ([]delivery.Header, error) {
	campaign := ss.Utr
	var kind models.TargetKind
	var target int64
	if ss.AutomationID != nil {
		var a models.Automation
		err := q.WithContext(ctx).Select("id", "utr", "automation_for", "automation_for_table").
			Where("id = ? AND user_id = ?", *ss.AutomationID, ss.UserID).First(&a).Error
		switch {
		case err == nil:
			campaign, kind, target = a.Utr, a.AutomationForTable, a.AutomationFor
		case !isNoRow(err):
			return nil, err
		}
	} else if len(ss.RecipientID) > 0 {
		kind, target = ss.RecipientID[0].Table, ss.RecipientID[0].ItemID()
	}
	var out []delivery.Header
	if target > 0 && fromDomain != "" {
		table, col := "contact_types", "name"
		if kind == models.TargetSegments {
			table, col = "segments", "segment_name"
		}
		var names []string
		if err := q.WithContext(ctx).Table(table).Where("id = ? AND user_id = ?", target, ss.UserID).Limit(1).Pluck(col, &names).Error; err != nil {
			return nil, err
		}
		if len(names) == 1 {
			label := strings.TrimSuffix(string(kind), "_") + "-" + strconv.FormatInt(target, 10) + ".a" + strconv.FormatInt(ss.UserID, 10) + "." + fromDomain
			out = append(out, delivery.Header{Name: "List-Id", Value: listPhrase(names[0]) + " <" + label + ">"})
		}
	}
	if campaign != "" {
		out = append(out, delivery.Header{Name: "Feedback-ID", Value: campaign + ":" + strconv.FormatInt(ss.UserID, 10) + ":herald"})
	}
	return out, nil
}

// listPhrase is a list's name as the phrase of a List-Id: quoted when it
// is ASCII, an encoded word otherwise (the header is written as it is
// then), control characters left out.
func listPhrase(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, strings.TrimSpace(name))
	for _, r := range name {
		if r > 0x7e {
			return mime.QEncoding.Encode("utf-8", name)
		}
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
}

func isNoRow(err error) bool { return notFound(err) == ErrNotFound }
