package deliverability

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"

	"herald/models"
)

// SpendToken records the token of a provider webhook's signature (Mailgun
// signs a timestamp and a random token), kept until expires, when its
// signature's timestamp is too old to be taken anyway. It reports whether
// the token is new: false means the request was seen before, on this
// process or another one (the table is shared), and is a replay. The
// token is kept as its hex SHA-256. Errors: the database's.
func (f *Feedback) SpendToken(ctx context.Context, source, token string, expires time.Time) (bool, error) {
	res := f.db.W.WithContext(ctx).Exec(`INSERT INTO webhook_tokens (source, token, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (source, token) DO NOTHING`, source, tokenKey(token), models.NewTimestamp(expires.UTC()))
	if res.Error != nil {
		return false, fmt.Errorf("feedback: spend a %s webhook token: %w", source, res.Error)
	}
	return res.RowsAffected == 1, nil
}

// UnspendToken forgets a token SpendToken recorded: the request it signed
// could not be handled, and the provider may send it again. Errors: the
// database's.
func (f *Feedback) UnspendToken(ctx context.Context, source, token string) error {
	if err := f.db.W.WithContext(ctx).Exec("DELETE FROM webhook_tokens WHERE source = ? AND token = ?", source, tokenKey(token)).Error; err != nil {
		return fmt.Errorf("feedback: forget a %s webhook token: %w", source, err)
	}
	return nil
}

// pruneTokens deletes the tokens whose signatures have expired.
func (f *Feedback) pruneTokens(ctx context.Context) error {
	if err := f.db.W.WithContext(ctx).Exec("DELETE FROM webhook_tokens WHERE expires_at < ?", models.NewTimestamp(f.now().UTC())).Error; err != nil {
		return fmt.Errorf("feedback: prune webhook tokens: %w", err)
	}
	return nil
}

func tokenKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}
