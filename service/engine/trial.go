package engine

import (
	"context"
	"fmt"
	"strings"

	"herald/delivery"
	"herald/models"
	"herald/service/core"
)

// CountAudience counts the distinct addresses send ss would go to now: its
// targets less its exclusions, global unsubscribers, its group's
// recipients and suppressed addresses, by the queries the resolver runs.
func CountAudience(ctx context.Context, db *core.DB, ss *models.SingleSend) (int64, error) {
	excl, err := exclusionsOf(ctx, db.R, ss)
	if err != nil {
		return 0, fmt.Errorf("trial: exclusions of send %d: %w", ss.ID, err)
	}
	var parts []string
	var args []any
	for _, cq := range queriesOf(ss, excl) {
		q, a := cq.emails()
		parts, args = append(parts, q), append(args, a...)
	}
	if len(parts) == 0 {
		return 0, nil
	}
	var n int64
	if err := db.R.WithContext(ctx).Raw("SELECT COUNT(*) FROM ("+strings.Join(parts, " UNION ")+") a", args...).Scan(&n).Error; err != nil {
		return n, fmt.Errorf("trial: count audience of send %d: %w", ss.ID, err)
	}
	return n, nil
}

// BuildTestMail builds the test mail of send ss to contact ct, as the
// engine builds its mails, with "[Test] " before the subject. Its
// tracking and unsubscribe links lead nowhere (it has no ledger row).
func BuildTestMail(ctx context.Context, db *core.DB, baseURL string, ss *models.SingleSend, ct *models.Contact) ([]byte, error) {
	c, err := compileSend(ctx, db, baseURL, ss)
	if err != nil {
		return nil, fmt.Errorf("trial: compile send %d: %w", ss.ID, err)
	}
	c.subject = delivery.Compile("[Test] " + ss.Subject)
	return c.build(make([]byte, 32), claimedRow{Email: ct.Email, FirstName: ct.FirstName, LastName: ct.LastName}, ct)
}
