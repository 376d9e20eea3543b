package deliverability

// The columns the console's list of senders sorts by (ListFilter.Sort →
// column; each has an index of (user_id, column), migration 00028), and
// its status filters with their keys in the order the console offers them.
var (
	SenderSorts    = map[string]string{"name": "from_name", "nickname": "nickname", "email": "from_email", "created": "created_at"}
	senderStatuses = map[string]string{"verified": "is_verified = 1", "unverified": "is_verified <> 1"}
	SenderStatuses = []string{"verified", "unverified"}
)
