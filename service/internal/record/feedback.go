package record

// The kinds of feedback rows as stored.

// Feedback kinds as stored (models.Feedback.Kind).
const (
	FeedbackHardBounce  = "hard_bounce"
	FeedbackSoftBounce  = "soft_bounce"
	FeedbackComplaint   = "complaint"
	FeedbackUnsubscribe = "unsubscribe"
	FeedbackBlock       = "block"
	FeedbackDeferral    = "deferral"
)
