package audience

// The columns the console's lists of contacts and segments sort by
// (ListFilter.Sort → column); each has an index of (user_id, column)
// (migration 00028).
var (
	ContactSorts = map[string]string{"email": "email", "name": "first_name", "created": "created_at"}
	SegmentSorts = map[string]string{"name": "segments.segment_name", "created": "segments.created_at"}
)
