package api

import (
	"encoding/json"
	"sort"
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

func appendStringField(b []byte, key, v string) []byte {
	b = append(b, key...)
	return jsonw.AppendString(b, v)
}

func appendNullableString(b []byte, key string, v *string) []byte {
	b = append(b, key...)
	if v == nil {
		return append(b, "null"...)
	}
	return jsonw.AppendString(b, *v)
}

func appendNullableTime(b []byte, key string, t *models.Timestamp) []byte {
	b = append(b, key...)
	if t == nil {
		return append(b, "null"...)
	}
	return appendTimestamp(b, *t)
}

func appendContactType(b []byte, t *models.ContactType) []byte {
	b = appendID(b, `{"id":`, t.ID)
	b = appendID(b, `,"user_id":`, t.UserID)
	b = appendStringField(b, `,"name":`, t.Name)
	b = appendNullableTime(b, `,"deleted_at":`, t.DeletedAt)
	b = appendTimes(b, t.CreatedAt, t.UpdatedAt)
	return append(b, '}')
}

// appendContactView writes a contact as the contact list answers it
// (custom_field keys sorted, as encoding/json sorts map keys).
func appendContactView(b []byte, v *models.ContactView) []byte {
	c := &v.Contact
	b = appendID(b, `{"id":`, c.ID)
	b = appendID(b, `,"user_id":`, c.UserID)
	b = appendID(b, `,"contact_type_id":`, c.ContactTypeID)
	b = appendStringField(b, `,"first_name":`, c.FirstName)
	b = appendStringField(b, `,"last_name":`, c.LastName)
	b = appendStringField(b, `,"email":`, c.Email)
	b = appendNullableString(b, `,"alt_email":`, c.AltEmail)
	b = appendStringField(b, `,"country":`, c.Country)
	b = appendStringField(b, `,"state":`, c.State)
	b = appendStringField(b, `,"city":`, c.City)
	b = appendStringField(b, `,"address_line1":`, c.AddressLine1)
	b = appendStringField(b, `,"address_line2":`, c.AddressLine2)
	b = appendStringField(b, `,"state_province_region":`, c.StateProvinceRegion)
	b = appendStringField(b, `,"postal_code":`, c.PostalCode)
	b = appendStringField(b, `,"status":`, c.Status)
	b = append(b, `,"consent":`...)
	if c.Consent == (models.Consent{}) {
		b = append(b, "{}"...)
	} else if doc, err := json.Marshal(c.Consent); err == nil {
		b = append(b, doc...)
	} else {
		b = append(b, "{}"...)
	}
	b = appendStringField(b, `,"language":`, c.Language)
	b = appendNullableTime(b, `,"deleted_at":`, c.DeletedAt)
	b = appendTimes(b, c.CreatedAt, c.UpdatedAt)
	b = append(b, `,"custom_field":`...)
	if v.CustomField == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '{')
		for i, k := range sortedKeys(v.CustomField) {
			cv := v.CustomField[k]
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, k)
			b = appendStringField(b, `:{"field_name":`, cv.FieldName)
			b = appendNullableString(b, `,"field_value":`, cv.FieldValue)
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	b = appendStringField(b, `,"fullname":`, v.Fullname)
	b = append(b, `,"tags":`...)
	if v.Tags == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, t := range v.Tags {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonw.AppendString(b, t)
		}
		b = append(b, ']')
	}
	if v.ContactType != nil {
		b = append(b, `,"contact_type":`...)
		b = appendContactType(b, v.ContactType)
	}
	return append(b, '}')
}

func sortedKeys(m map[string]models.CustomValue) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
