package service_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"herald/dbtest"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// A file whose header names no field herald knows imports through the
// console's column choices: columns mapped to reserved and custom
// fields, one skipped, one filling a custom field made for it.
func TestImportWithColumnChoices(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	acct := servicetest.NewAccount(t, svc, "cols@example.com")
	other := servicetest.NewAccount(t, svc, "other@example.com")
	if _, err := svc.Fields.Create(ctx, other, service.FieldInput{FieldName: "shoe", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Fields.Create(ctx, acct, service.FieldInput{FieldName: "company", FieldType: "text"}); err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, acct, "Kunden")
	if err != nil {
		t.Fatal(err)
	}

	fields := func() []string {
		fs, err := svc.Fields.Custom(ctx, acct)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range fs {
			names = append(names, f.FieldName+":"+f.FieldType)
		}
		return names
	}
	// Refused choices make nothing.
	for _, tt := range []struct {
		cols map[int]service.ImportColumn
		want string
	}{
		{map[int]service.ImportColumn{0: {Field: "email"}, 1: {Field: "EMAIL"}}, "Columns 1 and 2 both fill email: choose one."},
		{map[int]service.ImportColumn{0: {Field: "email"}, 1: {Field: "nickname"}}, `Column 2: there is no field "nickname".`},
		{map[int]service.ImportColumn{0: {Field: "email"}, 1: {Field: service.NewColumn, NewName: "Company", NewType: "text"}}, "Column 2: a field named company exists already; choose it instead."},
		{map[int]service.ImportColumn{0: {Field: "email"}, 1: {Field: service.NewColumn, NewName: "size", NewType: "colour"}, 2: {Field: service.NewColumn, NewName: "vip", NewType: "text"}}, "Column 2: choose the new field's type."},
		{map[int]service.ImportColumn{0: {Field: service.NewColumn, NewName: "bad name!", NewType: "text"}}, "Column 1: The field name format is invalid."},
	} {
		_, err := svc.Fields.ImportColumns(ctx, acct, tt.cols)
		var e *service.Error
		if !errors.As(err, &e) || len(e.Fields["columns"]) == 0 || e.Fields["columns"][0] != tt.want {
			t.Errorf("%v: %v, want %q", tt.cols, err, tt.want)
		}
		if got := strings.Join(fields(), ","); got != "company:text" {
			t.Fatalf("a refused mapping made fields: %s", got)
		}
	}

	header, err := svc.Fields.ImportColumns(ctx, acct, map[int]service.ImportColumn{
		0: {Field: "email"}, 1: {Field: "first_name"}, 2: {Field: service.SkipColumn},
		3: {Field: service.NewColumn, NewName: "shoe", NewType: "number"}, 4: {Field: "Company"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fields(), ","); got != "company:text,shoe:number" {
		t.Fatalf("fields after the mapping: %s", got)
	}
	imp, err := svc.Imports.Start(ctx, acct, ct.ID, "kunden.csv", -1)
	if err != nil {
		t.Fatal(err)
	}
	imp.Columns = header
	file := "E-Mail;Vorname;Intern;Schuhgröße;Firma;last_name\n" +
		"anna@example.com;Anna;x1;38;Acme;Berg\n" +
		"bernd@example.com;Bernd;x2;groß;Globex;Kohl\n"
	if err := svc.Imports.Run(ctx, imp, strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if imp.Created != 1 || imp.Skipped != 1 || len(imp.Problems) != 1 || imp.Problems[0].Line != 3 {
		t.Fatalf("report: created %d, skipped %d, problems %+v", imp.Created, imp.Skipped, imp.Problems)
	}
	var got []string
	err = svc.Contacts.Each(ctx, acct, service.ContactFilter{}, func(v *models.ContactView) error {
		shoe, company := "", ""
		if cv := v.CustomField["shoe"]; cv.FieldValue != nil {
			shoe = *cv.FieldValue
		}
		if cv := v.CustomField["company"]; cv.FieldValue != nil {
			company = *cv.FieldValue
		}
		got = append(got, v.Email+"|"+v.FirstName+"|"+v.LastName+"|"+shoe+"|"+company)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, ",") != "anna@example.com|Anna|Berg|38|Acme" {
		t.Fatalf("contacts: %v", got)
	}
}
