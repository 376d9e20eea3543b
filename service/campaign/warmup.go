package campaign

import (
	"context"
	"fmt"

	"herald/models"
	"herald/service/internal/record"
)

// fillWaiting sets ss.Waiting (decisions.md 11): for a running campaign
// send whose From domain follows a warm-up plan capping today, its queued
// messages beyond what is left of today's cap (several sends of one
// domain share the cap: each is shown against all of it). Other sends
// wait for nothing and keep 0.
func (s *SingleSends) fillWaiting(ctx context.Context, ss *models.SingleSend) error {
	if ss.Status != models.SendRunning || ss.Message == 1 || ss.FromSender == "" {
		return nil
	}
	p, loc, err := record.WarmupPlanOf(ctx, s.db.R, ss.UserID, record.DomainOf(ss.FromSender))
	if err != nil || p == nil {
		return err
	}
	today := record.LocalDay(s.now(), loc)
	limit, ok := p.CapOn(today)
	if !ok {
		return nil
	}
	used, err := record.WarmupCount(ctx, s.db.R, p.UserID, p.Domain, today)
	if err != nil {
		return err
	}
	var queued int64
	if err := s.db.R.WithContext(ctx).Model(&models.SendMessage{}).Where("send_id = ? AND state = ?", ss.ID, models.MessageQueued).
		Count(&queued).Error; err != nil {
		return fmt.Errorf("single sends: queued messages of send %d: %w", ss.ID, err)
	}
	ss.Waiting = max(queued-max(limit-used, 0), 0)
	return nil
}
