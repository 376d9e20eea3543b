package api

import (
	"strconv"

	"herald/jsonw"
	"herald/models"
)

// Hand-written JSON of the rows of the hottest lists: the same bytes as
// encoding/json (rows_test.go checks it), without reflection per row.

func appendID(b []byte, key string, id int64) []byte {
	b = append(b, key...)
	return strconv.AppendInt(b, id, 10)
}

func appendNullableID(b []byte, key string, id *int64) []byte {
	b = append(b, key...)
	if id == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *id, 10)
}

func appendTimes(b []byte, created, updated models.Timestamp) []byte {
	b = append(b, `,"created_at":`...)
	b = appendTimestamp(b, created)
	b = append(b, `,"updated_at":`...)
	return appendTimestamp(b, updated)
}

func appendTimestamp(b []byte, t models.Timestamp) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	return t.AppendJSON(b)
}

func appendUnsubscriber(b []byte, u *models.Unsubscriber) []byte {
	b = appendID(b, `{"id":`, u.ID)
	b = appendID(b, `,"user_id":`, u.UserID)
	b = appendNullableID(b, `,"unsubscribe_groups_id":`, u.UnsubscribeGroupsID)
	b = append(b, `,"email_address":`...)
	b = jsonw.AppendString(b, u.EmailAddress)
	b = appendTimes(b, u.CreatedAt, u.UpdatedAt)
	return append(b, '}')
}

func appendGroup(b []byte, g *models.UnsubscribeGroupCount) []byte {
	b = appendID(b, `{"id":`, g.ID)
	b = appendID(b, `,"user_id":`, g.UserID)
	b = append(b, `,"rand_id":`...)
	b = jsonw.AppendString(b, g.RandID)
	b = append(b, `,"group_name":`...)
	b = jsonw.AppendString(b, g.GroupName)
	b = append(b, `,"description":`...)
	b = jsonw.AppendString(b, g.Description)
	b = appendID(b, `,"is_display":`, int64(g.IsDisplay))
	b = appendTimes(b, g.CreatedAt, g.UpdatedAt)
	b = appendID(b, `,"unsubscribe_clients_count":`, g.UnsubscribeClientsCount)
	return append(b, '}')
}

func appendNotification(b []byte, n *models.NotificationRecipient) []byte {
	b = appendID(b, `{"id":`, n.ID)
	b = appendID(b, `,"user_id":`, n.UserID)
	b = append(b, `,"email_address":`...)
	b = jsonw.AppendString(b, n.EmailAddress)
	b = append(b, `,"email_owner":`...)
	b = jsonw.AppendString(b, n.EmailOwner)
	b = appendTimes(b, n.CreatedAt, n.UpdatedAt)
	return append(b, '}')
}
