// Package dashboard holds the overview page.
package dashboard

// Data are the counts the overview shows.
type Data struct {
	Name                   string
	GlobalUnsubscribers    int64
	Groups                 int64
	GroupRecipients        int64
	NotificationRecipients int64
}
