package core

// Helpers of bulk writes every area uses: random ids, chunks of ids,
// deletes by id within an account.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"gorm.io/gorm"
)

// RandomID returns n random bytes as hex.
func RandomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TouchLists records a change to the account's suppression lists
// (unsubscribers, groups, notification recipients), inside the change's
// transaction, so that cached answers of those lists are refused after it.
// Called first in the transaction, it also takes the account row's lock:
// concurrent changes of one account's lists run one after the other
// instead of deadlocking on each other's rows (PostgreSQL).
func TouchLists(tx *gorm.DB, accountID int64) error {
	if err := tx.Exec("UPDATE users SET list_version = list_version + 1 WHERE id = ?", accountID).Error; err != nil {
		return fmt.Errorf("lists: touch account %d: %w", accountID, err)
	}
	return nil
}

// BulkChunk is how many ids one statement of a bulk operation binds: far
// below SQLite's 32,766 variables and PostgreSQL's 65,535, whatever else
// the statement binds.
const BulkChunk = 1000

// Chunks splits items into slices of at most n.
func Chunks[T any](items []T, n int) [][]T {
	out := make([][]T, 0, (len(items)+n-1)/n)
	for len(items) > n {
		out = append(out, items[:n])
		items = items[n:]
	}
	if len(items) > 0 {
		out = append(out, items)
	}
	return out
}

// DeleteAll deletes the account's rows of model with ids (distinct), all
// or none: when any id is missing (or another account's) nothing is
// deleted and ErrNotFound is returned. scope narrows further (e.g. to one
// kind of row).
func DeleteAll(ctx context.Context, db *DB, accountID int64, model any, ids []int64, scope func(*gorm.DB) *gorm.DB) error {
	if err := TooMany(len(ids)); err != nil {
		return err
	}
	err := db.W.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := TouchLists(tx, accountID); err != nil {
			return err
		}
		q := func(part []int64) *gorm.DB {
			return scope(tx.Model(model).Where("user_id = ? AND id IN ?", accountID, part))
		}
		parts := Chunks(ids, BulkChunk)
		var n int64
		for _, part := range parts {
			var c int64
			if err := q(part).Count(&c).Error; err != nil {
				return fmt.Errorf("count the rows to delete: %w", err)
			}
			n += c
		}
		if n != int64(len(ids)) {
			return ErrNotFound
		}
		for _, part := range parts {
			if err := q(part).Delete(model).Error; err != nil {
				return fmt.Errorf("delete rows: %w", err)
			}
		}
		return nil
	})
	return Wrap(err, "bulk: delete")
}

func NoScope(q *gorm.DB) *gorm.DB { return q }
