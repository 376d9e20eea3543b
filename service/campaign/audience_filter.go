package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"herald/models"
	"herald/service/core"
)

// FormAudienceCount counts the recipients of an audience as a form holds
// it while it is being filled: to and exclude are contacts_<id> and
// segments_<id> items, group an unsubscribe group id ("" or "0" for
// none). Only the account's own live contact types and segments and its
// own group count; every other item (malformed, deleted, another
// account's) is left out rather than refused, so that the count follows
// what is chosen so far. AudienceCount leaves out a group's leavers and a
// segment's hand-added addresses by their ids alone: another account's
// ids must never reach it, or the count would tell whether an address is
// on that account's lists.
func (s *SingleSends) FormAudienceCount(ctx context.Context, accountID int64, to, exclude []string, group string) (int64, error) {
	to, err := s.OwnTargets(ctx, accountID, to)
	if err != nil {
		return 0, fmt.Errorf("single sends: count a form's audience: %w", err)
	}
	if exclude, err = s.OwnTargets(ctx, accountID, exclude); err != nil {
		return 0, fmt.Errorf("single sends: count a form's audience: %w", err)
	}
	groupID, _ := strconv.ParseInt(strings.TrimSpace(group), 10, 64)
	if groupID != 0 {
		if _, err := s.groups.Get(ctx, accountID, groupID); core.IsNotFound(err) {
			groupID = 0
		} else if err != nil {
			return 0, fmt.Errorf("single sends: count a form's audience: group %d: %w", groupID, err)
		}
	}
	n, err := s.AudienceCount(ctx, accountID, to, exclude, groupID)
	if err != nil {
		return n, fmt.Errorf("single sends: count a form's audience: %w", err)
	}
	return n, nil
}

// OwnTargets keeps, in their order and trimmed, the items that name one
// of the account's live contact types or segments (contacts_<id>,
// segments_<id>), and drops the others: malformed, deleted or another
// account's.
func (s *SingleSends) OwnTargets(ctx context.Context, accountID int64, items []string) ([]string, error) {
	var out []string
	own := map[models.Target]bool{}
	for _, it := range items {
		it = strings.TrimSpace(it)
		ts, ok := ParseTargets([]string{it})
		if !ok || len(ts) != 1 {
			continue
		}
		mine, known := own[ts[0]]
		if !known {
			var err error
			if mine, err = targetsExist(ctx, s.db.R, accountID, ts); err != nil {
				return nil, fmt.Errorf("single sends: own targets: %w", err)
			}
			own[ts[0]] = mine
		}
		if mine {
			out = append(out, it)
		}
	}
	return out, nil
}
