package record

// The shared vocabulary of A/B rows and figures: held-back rows, per-
// variant counts and the best variant.

import (
	"context"
	"fmt"

	"gorm.io/gorm"
)

// HeldBack is the next_at (Unix ms) of the rows an A/B test holds back
// until its winner is chosen: never due.
const HeldBack = int64(1) << 62

// The winner metrics.
const (
	ABOpens  = "opens"
	ABClicks = "clicks"
)

// BestVariant is the variant of n whose test messages were opened (or
// clicked) by the most people: human unique opens or clicks
// (delivery.MachineRules; docs/MACHINE_ACTIVITY.md), so that a privacy
// proxy fetching every pixel or a scanner following every link does not
// choose the subject. A tie goes to the raw unique counts, then to the
// first variant.
func BestVariant(counts map[ABKey]VariantFigures, n int, metric string) int {
	winner, best, bestRaw := 1, int64(-1), int64(-1)
	for v := 1; v <= n; v++ {
		f := counts[ABKey{v, false}]
		human, raw := f.HumanOpens, f.UniqueOpens
		if metric == ABClicks {
			human, raw = f.HumanClicks, f.UniqueClicks
		}
		if human > best || human == best && raw > bestRaw {
			winner, best, bestRaw = v, human, raw
		}
	}
	return winner
}

// ABKey is a group of a test's rows: a variant, in its test or in the rest.
type ABKey struct {
	Variant int
	Rest    bool
}

// VariantCounts counts a test's rows by variant, test rows and the rest
// apart (a rest row was released at the decision: release_at > 0).
func VariantCounts(ctx context.Context, r *gorm.DB, accountID, sendID int64) (map[ABKey]VariantFigures, error) {
	var rows []struct {
		Variant                                                                   int
		Rest                                                                      int
		Recipients, Delivered, UniqueOpens, UniqueClicks, HumanOpens, HumanClicks int64
	}
	if err := r.WithContext(ctx).Raw(LedgerSQL(`SELECT variant, CASE WHEN release_at > 0 THEN 1 ELSE 0 END AS rest, COUNT(*) AS recipients,
		SUM(CASE WHEN state = {delivered} THEN 1 ELSE 0 END) AS delivered, COUNT(opened_at) AS unique_opens, COUNT(clicked_at) AS unique_clicks,
		SUM(CASE WHEN human_opened_at > 0 THEN 1 ELSE 0 END) AS human_opens, SUM(CASE WHEN human_clicked_at > 0 THEN 1 ELSE 0 END) AS human_clicks
		FROM send_messages WHERE send_id = ? AND user_id = ? AND variant > 0 GROUP BY variant, CASE WHEN release_at > 0 THEN 1 ELSE 0 END`),
		sendID, accountID).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("ab test: variant counts of send %d: %w", sendID, err)
	}
	out := make(map[ABKey]VariantFigures, len(rows))
	for _, x := range rows {
		out[ABKey{x.Variant, x.Rest == 1}] = VariantFigures{x.Recipients, x.Delivered, x.UniqueOpens, x.UniqueClicks, x.HumanOpens, x.HumanClicks}
	}
	return out, nil
}

// VariantFigures are the figures of a group of a test's messages: the
// spec's unique counts (raw) and those of people (human).
type VariantFigures struct {
	Recipients, Delivered, UniqueOpens, UniqueClicks int64
	HumanOpens, HumanClicks                          int64
}
