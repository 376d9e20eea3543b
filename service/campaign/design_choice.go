package campaign

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"herald/models"
	"herald/service/core"
)

// The design choices of the console's single-send and email forms:
// "library-<id>" (a design of the library), "design-<id>" (one of the
// account's own designs), "html" (HTML written in the email form) and
// "current" (the design the send or email already holds).
const (
	ChoiceLibrary = "library"
	ChoiceDesign  = "design"
	ChoiceHTML    = "html"
	ChoiceCurrent = "current"
)

// ChosenDesign is what a design choice resolves to, as the checks of
// single sends and automation emails take it (SingleSendInput,
// ScheduleInput). TemplateID is "" when the choice names no design: the
// check then asks for one.
type ChosenDesign struct {
	TemplateID   string
	TemplateHTML string
	TemplateJSON string
	PreviewImg   string // an email's image; "" for a single send
}

// BlankImage is the preview image of the library's blank design, which
// stands for a design of the account's or written HTML.
func (t Templates) BlankImage() string {
	if d, err := t.Design(1); err == nil {
		return d.PreviewImage
	}
	return "01-blank.png"
}

// SendDesign resolves the design choice of a single send's form: a
// library design by its id (its HTML copied; an id the library lacks is
// passed on for the check to refuse), one of the account's designs as
// custom HTML (template 1), or the design the send cur already has
// ("current"). Any other choice, another account's design among them,
// names no design.
func (s *Designs) SendDesign(ctx context.Context, accountID int64, choice string, cur *models.SingleSend) (ChosenDesign, error) {
	var held *ChosenDesign
	if cur != nil && cur.TemplateHTML != nil {
		held = &ChosenDesign{TemplateID: strconv.FormatInt(cur.TemplateID, 10), TemplateHTML: *cur.TemplateHTML, TemplateJSON: deref(cur.TemplateJSON)}
	}
	d, err := s.choose(ctx, accountID, choice, held)
	d.PreviewImg = ""
	return d, err
}

// EmailDesign resolves the design choice of an automation email's form
// as SendDesign does, with the email's image: the library design's own,
// else the blank design's (for an account's design and for the HTML
// written in the form, choice "html", kept as custom HTML). "current"
// keeps the image the email cur has.
func (s *Designs) EmailDesign(ctx context.Context, accountID int64, choice, html string, cur *models.AutomationSchedule) (ChosenDesign, error) {
	if choice == ChoiceHTML {
		return ChosenDesign{TemplateID: "1", TemplateHTML: html, PreviewImg: s.templates.BlankImage()}, nil
	}
	var held *ChosenDesign
	if cur != nil && cur.TemplateHTML != nil {
		held = &ChosenDesign{TemplateID: strconv.FormatInt(cur.TemplateID, 10), TemplateHTML: *cur.TemplateHTML, TemplateJSON: deref(cur.TemplateJSON), PreviewImg: cur.PreviewImg}
		if held.PreviewImg == "" {
			held.PreviewImg = s.templates.BlankImage()
		}
	}
	return s.choose(ctx, accountID, choice, held)
}

// choose resolves a library, account or current design choice; held is
// the design of the current send or email (nil when it has none).
func (s *Designs) choose(ctx context.Context, accountID int64, choice string, held *ChosenDesign) (ChosenDesign, error) {
	kind, n, _ := strings.Cut(choice, "-")
	id, _ := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
	switch {
	case kind == ChoiceLibrary && n != "":
		d, err := s.templates.Design(id)
		if core.IsNotFound(err) {
			return ChosenDesign{TemplateID: n}, nil // the check names the id invalid
		}
		if err != nil {
			return ChosenDesign{}, err
		}
		return ChosenDesign{TemplateID: n, TemplateHTML: d.HTMLCode, PreviewImg: d.PreviewImage}, nil
	case kind == ChoiceDesign && n != "":
		d, err := s.Get(ctx, accountID, id)
		if core.IsNotFound(err) {
			return ChosenDesign{}, nil
		}
		if err != nil {
			return ChosenDesign{}, fmt.Errorf("designs: choose: %w", err)
		}
		return ChosenDesign{TemplateID: "1", TemplateHTML: d.TemplateHTML, TemplateJSON: d.TemplateJSON, PreviewImg: s.templates.BlankImage()}, nil
	case choice == ChoiceCurrent && held != nil:
		return *held, nil
	}
	return ChosenDesign{}, nil
}

// deref is the text p points at, "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
