package campaign

import (
	"context"
	"fmt"
)

// RelayCount is how many of a send's messages one relay carried.
type RelayCount struct {
	Relay string
	N     int64
}

// Relays counts the send's messages by the relay that carried them
// (send_messages.relay, written when herald sends through several
// relays), by name; none when one relay or the outbox carried them.
func (s *SingleSends) Relays(ctx context.Context, accountID, sendID int64) ([]RelayCount, error) {
	var out []RelayCount
	if err := s.db.R.WithContext(ctx).Raw("SELECT relay, COUNT(*) AS n FROM send_messages WHERE send_id = ? AND user_id = ? AND relay IS NOT NULL GROUP BY relay ORDER BY relay",
		sendID, accountID).Scan(&out).Error; err != nil {
		return nil, fmt.Errorf("single sends: relays of send %d: %w", sendID, err)
	}
	return out, nil
}
