package web

import (
	"context"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views/singlesends"
)

// abFormOf reads the compose form's A/B subject test as posted.
func abFormOf(c *fiber.Ctx) singlesends.ABForm {
	f := singlesends.ABForm{On: formValue(c, "ab_on") == "1", Share: formValue(c, "ab_share"),
		Metric: formValue(c, "ab_metric"), Wait: formValue(c, "ab_wait")}
	for i := range f.Subjects {
		n := strconv.Itoa(i + 1)
		f.Subjects[i], f.Preheaders[i] = formValue(c, "ab_subject_"+n), formValue(c, "ab_preheader_"+n)
	}
	return f
}

// abFormOfSend is a stored send's A/B test in the form.
func abFormOfSend(ss *models.SingleSend) singlesends.ABForm {
	f := singlesends.ABForm{On: ss.ABShare > 0}
	if !f.On {
		return f
	}
	f.Share, f.Metric, f.Wait = strconv.Itoa(ss.ABShare), ss.ABMetric, strconv.Itoa(ss.ABWait)
	for i := 0; i < len(ss.ABSubjects) && i < len(f.Subjects); i++ {
		f.Subjects[i] = ss.ABSubjects[i]
		if i < len(ss.ABPreheaders) {
			f.Preheaders[i] = ss.ABPreheaders[i]
		}
	}
	return f
}

// abInput is the form's A/B test as the service takes it.
func abInput(f singlesends.ABForm) *service.ABTestInput {
	return &service.ABTestInput{On: f.On, Subjects: f.Subjects[:], Preheaders: f.Preheaders[:], Share: f.Share, Metric: f.Metric, Wait: f.Wait}
}

// abTestOf is a send's A/B test with its figures for its page (nil: none).
func (w *Web) abTestOf(ctx context.Context, acct int64, ss *models.SingleSend) (*singlesends.ABTest, error) {
	t, err := w.svc.SingleSends.ABTest(ctx, acct, ss)
	if err != nil || t == nil {
		return nil, err
	}
	out := &singlesends.ABTest{Share: t.Share, Metric: t.Metric, Wait: t.Wait, DecideAt: t.DecideAt, Winner: t.Winner, Held: t.Held,
		Rest: singlesends.ABFigures(t.Rest), Waiting: t.Winner == 0 && time.Until(t.DecideAt) > 0}
	for _, v := range t.Variants {
		out.Variants = append(out.Variants, singlesends.ABVariant{N: v.N, Subject: v.Subject, Preheader: v.Preheader,
			ABFigures: singlesends.ABFigures(v.VariantFigures), Winner: v.Winner})
	}
	return out, nil
}
