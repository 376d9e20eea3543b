package service_test

import (
	"context"
	"strconv"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

func TestDesignChoices(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := dbtest.Service(t)
	acct := servicetest.NewAccount(t, svc, "owner@herald.test")
	other := servicetest.NewAccount(t, svc, "other@herald.test")
	mine, err := svc.Designs.Create(ctx, acct, service.DesignInput{Name: "Mine", TemplateJSON: `{"html":"<p>mine</p>"}`, TemplateHTML: "<p>mine</p>"})
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := svc.Designs.Create(ctx, other, service.DesignInput{Name: "Theirs", TemplateHTML: "<p>theirs</p>"})
	if err != nil {
		t.Fatal(err)
	}
	lib, err := svc.Templates.Design(2)
	if err != nil {
		t.Fatal(err)
	}
	blank := svc.Templates.BlankImage()
	if blank == "" || blank == lib.PreviewImage {
		t.Fatalf("blank image %q, library design 2's %q", blank, lib.PreviewImage)
	}
	held, heldJSON := "<p>held</p>", `{"held":1}`
	send := &models.SingleSend{TemplateID: 3, TemplateHTML: &held, TemplateJSON: &heldJSON}
	email := &models.AutomationSchedule{TemplateID: 1, TemplateHTML: &held, PreviewImg: "own.png"}
	emailNoImage := &models.AutomationSchedule{TemplateID: 4, TemplateHTML: &held}
	designChoice := service.ChoiceDesign + "-" + strconv.FormatInt(mine.ID, 10)

	for _, c := range []struct {
		name, choice string
		cur          *models.SingleSend
		want         service.ChosenDesign
	}{
		{"library", "library-2", nil, service.ChosenDesign{TemplateID: "2", TemplateHTML: lib.HTMLCode}},
		{"unknown library id", "library-999", nil, service.ChosenDesign{TemplateID: "999"}},
		{"malformed library id", "library-x", nil, service.ChosenDesign{TemplateID: "x"}},
		{"own design", designChoice, nil, service.ChosenDesign{TemplateID: "1", TemplateHTML: "<p>mine</p>", TemplateJSON: `{"html":"<p>mine</p>"}`}},
		{"another account's design", "design-" + strconv.FormatInt(theirs.ID, 10), nil, service.ChosenDesign{}},
		{"current", "current", send, service.ChosenDesign{TemplateID: "3", TemplateHTML: held, TemplateJSON: heldJSON}},
		{"current of a new send", "current", nil, service.ChosenDesign{}},
		{"written HTML is not a send's choice", "html", send, service.ChosenDesign{}},
		{"nothing", "", send, service.ChosenDesign{}},
	} {
		got, err := svc.Designs.SendDesign(ctx, acct, c.choice, c.cur)
		if err != nil || got != c.want {
			t.Errorf("SendDesign %s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}

	for _, c := range []struct {
		name, choice, html string
		cur                *models.AutomationSchedule
		want               service.ChosenDesign
	}{
		{"library", "library-2", "", nil, service.ChosenDesign{TemplateID: "2", TemplateHTML: lib.HTMLCode, PreviewImg: lib.PreviewImage}},
		{"unknown library id", "library-999", "", nil, service.ChosenDesign{TemplateID: "999"}},
		{"own design", designChoice, "", nil, service.ChosenDesign{TemplateID: "1", TemplateHTML: "<p>mine</p>", TemplateJSON: `{"html":"<p>mine</p>"}`, PreviewImg: blank}},
		{"another account's design", "design-" + strconv.FormatInt(theirs.ID, 10), "", nil, service.ChosenDesign{}},
		{"written HTML", "html", "<p>written</p>", email, service.ChosenDesign{TemplateID: "1", TemplateHTML: "<p>written</p>", PreviewImg: blank}},
		{"current keeps its image", "current", "", email, service.ChosenDesign{TemplateID: "1", TemplateHTML: held, PreviewImg: "own.png"}},
		{"current without an image", "current", "", emailNoImage, service.ChosenDesign{TemplateID: "4", TemplateHTML: held, PreviewImg: blank}},
		{"current of a new email", "current", "", nil, service.ChosenDesign{}},
		{"unknown kind", "other-2", "<p>x</p>", email, service.ChosenDesign{}},
	} {
		got, err := svc.Designs.EmailDesign(ctx, acct, c.choice, c.html, c.cur)
		if err != nil || got != c.want {
			t.Errorf("EmailDesign %s: %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
}
