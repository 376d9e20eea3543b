package service_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/service"
	"herald/service/servicetest"
)

func TestDesignsAndPreview(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	a := servicetest.NewAccount(t, svc, "a@example.com")
	b := servicetest.NewAccount(t, svc, "b@example.com")
	if _, err := svc.Designs.Create(ctx, a, service.DesignInput{Name: " "}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("empty design accepted: %v", err)
	}
	d, err := svc.Designs.Create(ctx, a, service.DesignInput{Name: "Mine", TemplateID: "2", TemplateJSON: `{"pages":[]}`, TemplateHTML: "<p>Hi ((first_name)) ((nope))</p>"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Designs.Get(ctx, b, d.ID); !service.IsNotFound(err) {
		t.Fatalf("b reads a's design: %v", err)
	}
	if _, err := svc.Designs.Update(ctx, b, d.ID, service.DesignInput{Name: "x", TemplateHTML: "x"}); !service.IsNotFound(err) {
		t.Fatalf("b updates a's design: %v", err)
	}
	ct, _ := svc.ContactTypes.Create(ctx, a, "People")
	c, err := svc.Contacts.Create(ctx, a, service.ContactInput{ContactTypeID: strconv.FormatInt(ct.ID, 10), Email: "x@example.com", Country: "US", FirstName: "<Ann>"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := svc.Designs.Preview(ctx, a, d.TemplateHTML, c.ID)
	if err != nil || out != "<p>Hi &lt;Ann&gt; </p>" {
		t.Fatalf("preview: %q %v", out, err)
	}
	if _, err := svc.Designs.Preview(ctx, b, d.TemplateHTML, c.ID); !service.IsNotFound(err) {
		t.Fatalf("b previews with a's contact: %v", err)
	}
	sample, _ := svc.Designs.Preview(ctx, a, "((first_name))", 0)
	if strings.TrimSpace(sample) == "" {
		t.Fatal("sample values empty")
	}
}
