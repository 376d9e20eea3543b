package campaign

import (
	"context"
	"fmt"

	"herald/models"
	"herald/service/core"
)

// StepSend returns the send that carries one email of the automation: its
// counters, activity and reach are the email's report (SingleSends'
// Activity and Audience read it like any send). Errors: ErrNotFound (no
// such automation or email of the account, or a step that sends nothing:
// the branch).
func (s *Automations) StepSend(ctx context.Context, accountID int64, utr, stepUtr string) (*models.SingleSend, error) {
	_, r, err := s.schedule(ctx, accountID, utr, stepUtr)
	if err != nil {
		return nil, fmt.Errorf("automations: report of an email: %w", err)
	}
	if r.SendID == nil {
		return nil, core.ErrNotFound
	}
	var ss models.SingleSend
	if err := s.db.R.WithContext(ctx).Omit("template_html", "template_json").
		Where("id = ? AND user_id = ?", *r.SendID, accountID).First(&ss).Error; err != nil {
		return nil, core.NotFoundOr(err, "automations: report of an email")
	}
	return &ss, nil
}
