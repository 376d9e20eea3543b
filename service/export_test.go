package service

import (
	"context"

	"herald/migrations"
	"herald/service/core"
)

// Notify mails the account's notification recipients one of herald's
// short reports (as a finished send or import does).
func Notify(ctx context.Context, svc *Service, accountID int64, subject string) {
	svc.Mail.Notify(ctx, accountID, subject, "A report.", [][2]string{{"Sent", "1"}}, svc.Mail.BaseURL)
}

// MigrateTo applies the embedded migrations to d up to version and no
// further (tests of a repair migration).
func MigrateTo(ctx context.Context, d *core.DB, version int64) error {
	sqlDB, err := d.W.DB()
	if err != nil {
		return err
	}
	return migrations.UpTo(ctx, sqlDB, d.Dialect, version, d.GoMigrations()...)
}
