package core

// Server-wide settings kept in the database: secrets generated once and
// shared by every process, the tracking key among them.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"herald/models"
)

// TrackingKey is the key of tracking and unsubscribe tokens, shared by
// every process through the settings table.
func (s *Settings) TrackingKey(ctx context.Context) ([]byte, error) {
	v, err := s.Secret(ctx, "tracking_key", 32)
	return []byte(v), err
}

// Settings keeps process-wide values in the database.
type Settings struct{ DB *DB }

// Secret returns the value stored under key, creating it from n random
// bytes (hex) the first time. Every process sharing the database gets the
// same value.
func (s *Settings) Secret(ctx context.Context, key string, n int) (string, error) {
	return secret(ctx, s.DB.R, s.DB.W, key, n)
}

// SecretIn is Secret read and, the first time, made inside tx: a caller
// that holds the writer (SQLite's single connection) in a transaction
// would otherwise wait for itself.
func (s *Settings) SecretIn(ctx context.Context, tx *gorm.DB, key string, n int) (string, error) {
	return secret(ctx, tx, tx, key, n)
}

func secret(ctx context.Context, r, w *gorm.DB, key string, n int) (string, error) {
	var st models.Setting
	err := r.WithContext(ctx).Where("name = ?", key).First(&st).Error
	if err == nil {
		return st.Value, nil
	}
	if !errors.Is(err, gorm.ErrRecordNotFound) {
		return "", fmt.Errorf("settings: read %s: %w", key, err)
	}
	b := make([]byte, n)
	_, _ = rand.Read(b)
	st = models.Setting{Name: key, Value: hex.EncodeToString(b)}
	if err := w.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&st).Error; err != nil {
		return "", fmt.Errorf("settings: store %s: %w", key, err)
	}
	// Another process may have won the race: read what is stored.
	if err := w.WithContext(ctx).Where("name = ?", key).First(&st).Error; err != nil {
		return "", fmt.Errorf("settings: read %s again: %w", key, err)
	}
	return st.Value, nil
}
