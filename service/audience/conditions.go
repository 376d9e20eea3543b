package audience

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"herald/models"
	"herald/service/core"
	"herald/world"
)

// Operators a segment condition may use (decisions.md section 4).
var Operators = []string{
	"equals", "not_equals", "contains", "not_contains", "starts_with", "ends_with",
	"is_empty", "is_not_empty", "greater_than", "less_than", "in",
}

// OperatorsFor returns the operators that make sense for a field type.
func OperatorsFor(fieldType string) []string {
	switch fieldType {
	case "tags":
		// A contact carries the tag, or not (tags.go).
		return []string{"contains", "not_contains"}
	case "engagement":
		// A contact is at one level (engagement.go).
		return []string{"equals", "not_equals", "in"}
	case "number", "datetime-local", "created_at":
		return []string{"equals", "not_equals", "greater_than", "less_than", "is_empty", "is_not_empty", "in"}
	}
	return []string{"equals", "not_equals", "contains", "not_contains", "starts_with", "ends_with", "is_empty", "is_not_empty", "in"}
}

// Condition is one compiled test of a segment.
type Condition struct {
	Field    string // field name
	Type     string // text, number, datetime-local, created_at, tags
	Custom   bool
	Operator string
	Values   []string // normalised; several for `in`
	// Now is the time an engagement condition judges levels at (set by
	// atNow before the SQL is built).
	Now time.Time
}

// Limits of a segment (decisions.md 8): its conditions, and the values of
// one `in` condition. Beyond them a segment is refused, so that every
// later change of a contact of its type can still keep it current.
const (
	MaxConditions = 50
	MaxInValues   = 1000
)

// compileConditions validates the three parallel lists of a segment
// against the account's fields and normalises the values.
func compileConditions(fields, ops, values []string, customs []models.Field, p core.Problems) []Condition {
	n := max(len(fields), len(ops))
	if n > MaxConditions {
		p.Merge(core.TooManyItems("select_field", MaxConditions))
	}
	conds := make([]Condition, 0, n)
	for i := 0; i < n; i++ {
		key := func(name string) string { return fmt.Sprintf("%s.%d", name, i) }
		var f, op, v string
		if i < len(fields) {
			f = strings.TrimSpace(fields[i])
		}
		if i < len(ops) {
			op = strings.TrimSpace(strings.ToLower(ops[i]))
		}
		if i < len(values) {
			v = values[i]
		}
		c := Condition{Field: f, Operator: op}
		switch {
		case f == "":
			p.AddReason(key("select_field"), core.ReasonRequired, core.MsgRequired(key("select_field")))
			continue
		case f == "created_at":
			c.Type = "created_at"
		case f == "tags":
			c.Type = "tags"
		case f == EngagementField:
			c.Type = "engagement"
		case IsReservedField(f):
			c.Type = "text"
		default:
			var typ string
			ok := false
			for _, cf := range customs {
				// A custom field may be named by its id as text too.
				if cf.FieldName == f || strconv.FormatInt(cf.ID, 10) == f {
					typ, ok, f = cf.FieldType, true, cf.FieldName
					break
				}
			}
			if !ok {
				p.InvalidChoice(key("select_field"))
				continue
			}
			c.Field, c.Type, c.Custom = f, typ, true
		}
		if !oneOf(op, OperatorsFor(c.Type)) {
			p.InvalidChoice(key("select_operator"))
			continue
		}
		if op == "is_empty" || op == "is_not_empty" {
			conds = append(conds, c)
			continue
		}
		if strings.IndexByte(v, 0) >= 0 {
			p.AddReason(key("value"), core.ReasonNUL, core.MsgNUL(key("value")))
			continue
		}
		raw := []string{v}
		if op == "in" {
			// Counted before the split: a value of millions of separators
			// is refused without making millions of strings first.
			if strings.Count(v, "|") >= MaxInValues {
				p.Merge(core.TooManyItems(key("value"), MaxInValues))
				continue
			}
			raw = strings.Split(v, "|")
		}
		for _, r := range raw {
			nv, ok := normaliseValue(c, r)
			if !ok {
				p.Add(key("value"), fmt.Sprintf("The %s does not fit the %s field.", core.Label(key("value")), c.Field))
				break
			}
			c.Values = append(c.Values, nv)
		}
		if len(c.Values) == 0 || (op != "in" && strings.TrimSpace(v) == "") {
			if !p.Has(key("value")) {
				p.AddReason(key("value"), core.ReasonRequired, core.MsgRequired(key("value")))
			}
			continue
		}
		conds = append(conds, c)
	}
	return conds
}

// normaliseValue turns a condition value into the stored form it is
// compared with: lower-cased trimmed text, a number, an ISO date, or a
// country id.
func normaliseValue(c Condition, v string) (string, bool) {
	v = strings.TrimSpace(v)
	switch c.Type {
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatFloat(f, 'f', -1, 64), true
	case "datetime-local":
		return NormaliseDateTime(v)
	case "tags":
		return NormaliseTag(v), true
	case "engagement":
		return normaliseLevel(v)
	case "created_at":
		t, ok := parseDateTime(v)
		if !ok {
			return "", false
		}
		return t.UTC().Format(time.RFC3339Nano), true
	}
	if c.Field == "country" && v != "" {
		if ct, ok := world.LookupCountry(v); ok {
			return strconv.FormatInt(ct.ID, 10), true
		}
	}
	return strings.ToLower(v), true
}

var dateLayouts = []string{
	"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02",
	time.RFC3339, time.RFC3339Nano,
}

func parseDateTime(v string) (time.Time, bool) {
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, strings.TrimSpace(v)); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// NormaliseDateTime reads a datetime-local value (or a date) and returns
// its stored form `YYYY-MM-DDTHH:MM:SS`, which sorts as text.
func NormaliseDateTime(v string) (string, bool) {
	t, ok := parseDateTime(v)
	if !ok {
		return "", false
	}
	return t.Format("2006-01-02T15:04:05"), true
}

// sqlCondition renders the conditions as a WHERE fragment over contacts
// aliased c, with its arguments. An empty list matches every contact.
func sqlCondition(d core.Dialect, conds []Condition, or bool) (string, []any) {
	if len(conds) == 0 {
		return "1=1", nil
	}
	parts := make([]string, 0, len(conds))
	var args []any
	for _, c := range conds {
		s, a := sqlOne(d, c)
		parts = append(parts, "("+s+")")
		args = append(args, a...)
	}
	join := " AND "
	if or {
		join = " OR "
	}
	return balanced(parts, join), args
}

// balanced joins parts as a balanced tree of parenthesised pairs, in
// order, so that the expression is about log2(n) deep instead of n:
// SQLite refuses an expression tree deeper than 1,000, which a segment of
// a few hundred conditions (stored before the limit of MaxConditions)
// reached as a plain chain.
func balanced(parts []string, join string) string {
	if len(parts) <= 2 {
		return strings.Join(parts, join)
	}
	mid := len(parts) / 2
	return "(" + balanced(parts[:mid], join) + ")" + join + "(" + balanced(parts[mid:], join) + ")"
}

// conditionColumn is the stored value a condition tests, as an expression
// over contacts aliased c (Explain shows it beside the verdict).
func conditionColumn(d core.Dialect, c Condition) string {
	switch {
	case c.Type == "created_at":
		return "c.created_at"
	case c.Type == "tags":
		return tagListSQL(d)
	case c.Type == "engagement":
		return engagementSQL(d, c.Now)
	case c.Custom:
		return d.CustomField("c.custom_fields", c.Field)
	}
	return "c." + c.Field
}

func sqlOne(d core.Dialect, c Condition) (string, []any) {
	if c.Type == "tags" {
		if c.Operator == "not_contains" {
			return "NOT " + tagSQL, []any{c.Values[0]}
		}
		return tagSQL, []any{c.Values[0]}
	}
	raw := conditionColumn(d, c)
	if c.Type == "created_at" {
		switch c.Operator {
		case "is_empty":
			return "1=0", nil
		case "is_not_empty":
			return "1=1", nil
		}
		ts := make([]any, len(c.Values))
		for i, v := range c.Values {
			t, _ := time.Parse(time.RFC3339Nano, v)
			ts[i] = t
		}
		if c.Operator == "in" {
			return inSQL(d, raw, "created_at", ts)
		}
		return cmpSQL(raw, c.Operator, ts)
	}
	text := "LOWER(TRIM(COALESCE(" + raw + ", '')))"
	switch c.Operator {
	case "is_empty":
		return "TRIM(COALESCE(" + raw + ", '')) = ''", nil
	case "is_not_empty":
		return "TRIM(COALESCE(" + raw + ", '')) <> ''", nil
	case "contains", "not_contains", "starts_with", "ends_with":
		pat := core.LikeEscape(c.Values[0])
		switch c.Operator {
		case "contains", "not_contains":
			pat = "%" + pat + "%"
		case "starts_with":
			pat += "%"
		case "ends_with":
			pat = "%" + pat
		}
		not := ""
		if c.Operator == "not_contains" {
			not = "NOT "
		}
		return text + " " + not + `LIKE ? ESCAPE '\'`, []any{pat}
	}
	if c.Type == "number" {
		num := d.Number("NULLIF(TRIM(COALESCE(" + raw + ", '')), '')")
		vals := make([]any, len(c.Values))
		for i, v := range c.Values {
			vals[i], _ = strconv.ParseFloat(v, 64)
		}
		if c.Operator == "in" {
			return inSQL(d, num, "number", vals)
		}
		return cmpSQL(num, c.Operator, vals)
	}
	vals := make([]any, len(c.Values))
	for i, v := range c.Values {
		vals[i] = v
	}
	if c.Type == "datetime-local" {
		text = "TRIM(COALESCE(" + raw + ", ''))"
	}
	if c.Operator == "in" {
		return inSQL(d, text, "text", vals)
	}
	return cmpSQL(text, c.Operator, vals)
}

// inSQL tests expr against a list of values passed as one JSON array, so
// that a condition of a thousand values is one bind variable, not a
// thousand (SQLite allows 32,766 per statement; a segment may hold 50
// such conditions, and keeping it current adds a batch of contact ids).
// kind is text, number or created_at: how the array's items are read.
func inSQL(d core.Dialect, expr, kind string, vals []any) (string, []any) {
	items := make([]any, len(vals))
	for i, v := range vals {
		if t, ok := v.(time.Time); ok {
			v = d.TimeValue(t)
		}
		items[i] = v
	}
	list, _ := json.Marshal(items)
	return expr + " IN (" + d.JSONArrayItems(kind) + ")", []any{string(list)}
}

// cmpSQL compares expr with one value (or several for `in`). A value
// that is absent never equals and never differs from a given value in
// the ordering operators; not_equals counts an absent value as different.
func cmpSQL(expr, op string, vals []any) (string, []any) {
	switch op {
	case "equals":
		return expr + " = ?", vals[:1]
	case "not_equals":
		return "COALESCE(" + expr + " <> ?, 1=1)", vals[:1]
	case "greater_than":
		return expr + " > ?", vals[:1]
	case "less_than":
		return expr + " < ?", vals[:1]
	}
	return "1=0", nil
}
