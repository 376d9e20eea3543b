package deliverability

import (
	"context"
	"fmt"
	"log/slog"

	"herald/models"
)

// alert mails the notification recipients, once per send, when the
// send's counter column passed rate of its delivered messages (marked in
// mark, a conditional update: one process mails it).
func (f *Feedback) alert(ctx context.Context, sendID int64, mark, counter string, rate float64) {
	res := f.db.W.WithContext(ctx).Exec("UPDATE single_sends SET "+mark+" = ? WHERE id = ? AND "+mark+" IS NULL AND delivered > 0 AND "+
		counter+" > delivered * ?", models.NewTimestamp(f.now()), sendID, rate)
	if res.Error != nil {
		slog.Warn("feedback: rate alert", "send", sendID, "err", res.Error)
		return
	}
	if res.RowsAffected == 0 {
		return
	}
	var ss models.SingleSend
	if err := f.db.R.WithContext(ctx).Where("id = ?", sendID).First(&ss).Error; err != nil {
		return
	}
	link := f.mail.BaseURL + "/single-sends/" + ss.Utr
	if ss.AutomationID != nil {
		var utr string
		_ = f.db.R.WithContext(ctx).Table("automations").Select("utr").Where("id = ?", *ss.AutomationID).Scan(&utr).Error
		link = f.mail.BaseURL + "/automations/" + utr
	}
	pct := func(n int64) string {
		return fmt.Sprintf("%d (%.2f %% of delivered)", n, 100*float64(n)/float64(ss.Delivered))
	}
	rows := [][2]string{{"Delivered", fmt.Sprint(ss.Delivered)}, {"Hard bounces", pct(ss.Bounces)}, {"Spam complaints", pct(ss.SpamReports)}}
	var subject, intro string
	if counter == "bounces" {
		subject = "High bounce rate: “" + ss.SingleSendName + "”"
		intro = fmt.Sprintf("More than %.0f %% of the messages of “%s” bounced for good. Mailbox providers read a high bounce rate as a sign of "+
			"an old or bought list: check where these addresses came from. Bounced addresses are suppressed from later sends.", bounceAlertRate*100, ss.SingleSendName)
	} else {
		subject = "Spam complaints: “" + ss.SingleSendName + "”"
		intro = fmt.Sprintf("More than %.1f %% of the recipients of “%s” marked it as spam. Gmail and Yahoo act on complaint rates above "+
			"0.3 %%: check that everyone on the list asked for this mail. The complaining addresses are unsubscribed.", complaintAlertRate*100, ss.SingleSendName)
	}
	f.mail.Notify(ctx, ss.UserID, subject, intro, rows, link)
}
