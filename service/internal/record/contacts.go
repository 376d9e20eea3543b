package record

// The shared reading of contact rows: the columns, the scan, custom fields
// and country names.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"

	"herald/models"
	"herald/service/core"
	"herald/world"
)

// ContactColumns are the columns scanContacts reads, in its order (a live
// contact's deleted_at is null: not read). On SQLite the times are read as
// text: models.Timestamp parses the stored form by hand, several times
// faster than the driver's general date parsing.
func ContactColumns(d core.Dialect) string {
	return "id, user_id, contact_type_id, first_name, last_name, email, alt_email, country, state, city, " +
		"address_line1, address_line2, state_province_region, postal_code, custom_fields, status, consent, language, last_engaged_at, " + d.TimesAsText("created_at", "updated_at")
}

// ScanContacts reads a batch of contacts without GORM's reflection: a
// list of 100,000 contacts spends most of its time here otherwise.
func ScanContacts(q *gorm.DB, dst *[]models.Contact) error {
	rows, err := q.Rows()
	if err != nil {
		return fmt.Errorf("contacts: scan: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c models.Contact
		if err := rows.Scan(&c.ID, &c.UserID, &c.ContactTypeID, &c.FirstName, &c.LastName, &c.Email, &c.AltEmail,
			&c.Country, &c.State, &c.City, &c.AddressLine1, &c.AddressLine2, &c.StateProvinceRegion, &c.PostalCode,
			&c.CustomFields, &c.Status, &c.Consent, &c.Language, &c.LastEngagedAt, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return fmt.Errorf("contacts: scan: %w", err)
		}
		*dst = append(*dst, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("contacts: scan: %w", err)
	}
	return nil
}

// ParseCustom reads a stored custom-values object. Documents without
// escapes (nearly all) are read by hand, a list of 100,000 contacts reads
// 100,000 of them; others go through encoding/json.
func ParseCustom(doc string) map[string]string {
	m := map[string]string{}
	if doc == "" || doc == "{}" {
		return m
	}
	if !strings.Contains(doc, `\`) {
		if flat, ok := parseFlat(doc, m); ok {
			return flat
		}
		clear(m)
	}
	_ = json.Unmarshal([]byte(doc), &m)
	return m
}

// parseFlat reads {"k":"v", …} with string values and no escapes; it
// reports false for anything else (numbers, nesting), left to encoding/json.
func parseFlat(s string, m map[string]string) (map[string]string, bool) {
	i := 0
	ws := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r') {
			i++
		}
	}
	str := func() (string, bool) {
		if i >= len(s) || s[i] != '"' {
			return "", false
		}
		end := strings.IndexByte(s[i+1:], '"')
		if end < 0 {
			return "", false
		}
		v := s[i+1 : i+1+end]
		i += end + 2
		return v, true
	}
	ws()
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	i++
	for {
		ws()
		if i < len(s) && s[i] == '}' && len(m) == 0 {
			i++
			break
		}
		k, ok := str()
		if !ok {
			return nil, false
		}
		ws()
		if i >= len(s) || s[i] != ':' {
			return nil, false
		}
		i++
		ws()
		v, ok := str()
		if !ok {
			return nil, false
		}
		m[k] = v
		ws()
		if i < len(s) && s[i] == ',' {
			i++
			continue
		}
		if i < len(s) && s[i] == '}' {
			i++
			break
		}
		return nil, false
	}
	ws()
	return m, i == len(s)
}

// CountryName answers a stored country id as the country's name; any other
// text is answered as it is.
func CountryName(stored string) string {
	if id, err := strconv.ParseInt(stored, 10, 64); err == nil {
		if ct, ok := world.CountryByID(id); ok {
			return ct.Name
		}
	}
	return stored
}
