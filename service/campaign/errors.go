package campaign

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"herald/service/core"
)

// each is core.Each that wraps a failure of the listing itself with
// doing. An error of fn comes back as it is: a caller may stop early with
// a sentinel of its own and compare it with ==.
func each[T any](ctx context.Context, doing string, f core.ListFilter, q func() *gorm.DB, idOf func(*T) int64, fn func(*T) error) error {
	fnFailed := false
	err := core.Each(ctx, f, "", q, idOf, func(m *T) error {
		if err := fn(m); err != nil {
			fnFailed = true
			return err
		}
		return nil
	})
	if err != nil && !fnFailed {
		return fmt.Errorf("%s: %w", doing, err)
	}
	return err
}
