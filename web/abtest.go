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
		Metric: formValue(c, "ab_metric"), Wait: formValue(c, "ab_wait"),
		Kind: formValue(c, "ab_kind"), TimeAfter: formValue(c, "ab_time_after")}
	for i := range f.Subjects {
		n := strconv.Itoa(i + 1)
		f.Subjects[i], f.Preheaders[i] = formValue(c, "ab_subject_"+n), formValue(c, "ab_preheader_"+n)
		f.Designs[i] = formValue(c, "ab_design_"+n)
		f.Kept[i] = f.Designs[i] == singlesends.ABKept
	}
	return f
}

// abFormOfSend is a stored send's A/B test in the form: a variant's own
// design as the account's design with the same HTML, else as the copy
// the variant keeps.
func (w *Web) abFormOfSend(ctx context.Context, acct int64, ss *models.SingleSend) (singlesends.ABForm, error) {
	f := singlesends.ABForm{On: ss.ABShare > 0}
	if !f.On {
		return f, nil
	}
	f.Share, f.Metric, f.Wait = strconv.Itoa(ss.ABShare), ss.ABMetric, strconv.Itoa(ss.ABWait)
	if ss.ABTimeAfter > 0 {
		// A send-time test's halves both carry the send's subject: the
		// subjects' fields stay empty.
		f.Kind, f.TimeAfter, f.Share = service.ABTime, strconv.Itoa(ss.ABTimeAfter), ""
		return f, nil
	}
	for i := 0; i < len(ss.ABSubjects) && i < len(f.Subjects); i++ {
		f.Subjects[i] = ss.ABSubjects[i]
		if i < len(ss.ABPreheaders) {
			f.Preheaders[i] = ss.ABPreheaders[i]
		}
		if i < len(ss.ABDesigns) && ss.ABDesigns[i] != "" {
			choice, err := w.storedChoice(ctx, acct, &models.SingleSend{TemplateID: 1, TemplateHTML: &ss.ABDesigns[i]})
			if err != nil {
				return f, err
			}
			if choice == "current" {
				choice, f.Kept[i] = singlesends.ABKept, true
			}
			f.Designs[i] = choice
		}
	}
	return f, nil
}

// abInput is the form's A/B test as the service takes it: each variant's
// design choice read into its HTML ("kept": the copy the stored send cur
// holds for that variant).
func (w *Web) abInput(ctx context.Context, acct int64, f singlesends.ABForm, cur *models.SingleSend) (*service.ABTestInput, error) {
	in := &service.ABTestInput{On: f.On, Subjects: f.Subjects[:], Preheaders: f.Preheaders[:], Share: f.Share, Metric: f.Metric, Wait: f.Wait,
		Kind: f.Kind, TimeAfter: f.TimeAfter}
	in.Designs = make([]string, len(f.Designs))
	for i, choice := range f.Designs {
		switch {
		case choice == "":
		case choice == singlesends.ABKept:
			if cur != nil && i < len(cur.ABDesigns) {
				in.Designs[i] = cur.ABDesigns[i]
			}
		default:
			d, err := w.svc.Designs.SendDesign(ctx, acct, choice, nil)
			if err != nil {
				return nil, err
			}
			in.Designs[i] = d.TemplateHTML
		}
	}
	return in, nil
}

// abTestOf is a send's A/B test with its figures for its page (nil: none).
func (w *Web) abTestOf(ctx context.Context, acct int64, ss *models.SingleSend) (*singlesends.ABTest, error) {
	t, err := w.svc.SingleSends.ABTest(ctx, acct, ss)
	if err != nil || t == nil {
		return nil, err
	}
	out := &singlesends.ABTest{Share: t.Share, Metric: t.Metric, Wait: t.Wait, DecideAt: t.DecideAt, Winner: t.Winner, Held: t.Held,
		Rest: singlesends.ABFigures(t.Rest), Waiting: t.Winner == 0 && time.Until(t.DecideAt) > 0,
		TimeAfter: t.TimeAfter, Second: t.Second}
	if !t.Second.IsZero() {
		out.First = t.Second.Add(-t.TimeAfter)
	}
	for _, v := range t.Variants {
		out.Variants = append(out.Variants, singlesends.ABVariant{N: v.N, Subject: v.Subject, Preheader: v.Preheader, OwnDesign: v.Design != "",
			ABFigures: singlesends.ABFigures(v.VariantFigures), Winner: v.Winner})
	}
	return out, nil
}
