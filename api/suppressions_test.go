package api_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"
)

type unsubscriber struct {
	ID                  int64  `json:"id"`
	UserID              int64  `json:"user_id"`
	UnsubscribeGroupsID *int64 `json:"unsubscribe_groups_id"`
	EmailAddress        string `json:"email_address"`
	CreatedAt           string `json:"created_at"`
	UpdatedAt           string `json:"updated_at"`
}

type group struct {
	ID                      int64  `json:"id"`
	UserID                  int64  `json:"user_id"`
	RandID                  string `json:"rand_id"`
	GroupName               string `json:"group_name"`
	Description             string `json:"description"`
	IsDisplay               int    `json:"is_display"`
	CreatedAt               string `json:"created_at"`
	UpdatedAt               string `json:"updated_at"`
	UnsubscribeClientsCount *int64 `json:"unsubscribe_clients_count"`
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)

func checkTimestamps(t *testing.T, ts ...string) {
	t.Helper()
	for _, s := range ts {
		if !timestampRE.MatchString(s) {
			t.Fatalf("timestamp %q is not of the form 2026-11-22T05:10:01.123456Z", s)
		}
	}
}

func globalList(t *testing.T, c *client) []unsubscriber {
	t.Helper()
	return list[unsubscriber](t, c.send("GET", "/api/global-unsubscribes", nil), "unSubscribers")
}

func TestGlobalUnsubscribes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if got := globalList(t, e.a); len(got) != 0 {
		t.Fatalf("new account has %d unsubscribers", len(got))
	}

	expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", " Ann@Example.com, bob@example.com ,ann@example.com")), "Added Successfully")
	// Already there: not duplicated. JSON bodies work too.
	expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", `{"email_address":"BOB@example.com,cid@example.com"}`), "Added Successfully")
	got := globalList(t, e.a)
	if len(got) != 3 {
		t.Fatalf("want 3 addresses, got %+v", got)
	}
	want := []string{"ann@example.com", "bob@example.com", "cid@example.com"}
	for i, u := range got {
		if u.EmailAddress != want[i] || u.UserID != e.a.id || u.UnsubscribeGroupsID != nil {
			t.Fatalf("row %d: %+v", i, u)
		}
		checkTimestamps(t, u.CreatedAt, u.UpdatedAt)
	}
	// The other account sees nothing of it.
	if n := len(globalList(t, e.b)); n != 0 {
		t.Fatalf("account b sees %d of a's unsubscribers", n)
	}

	t.Run("validation", func(t *testing.T) {
		expectVAL(t, e.a.send("POST", "/api/global-unsubscribes/save", form()), map[string][]string{"email_address": {"The email address field is required."}})
		expectVAL(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", "  ")), map[string][]string{"email_address": {"The email address field is required."}})
		expectVAL(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", "ok@example.com, not-an-address")), map[string][]string{"email_address": {"The email address must be a valid email address."}})
		if n := len(globalList(t, e.a)); n != 3 {
			t.Fatalf("a refused save added rows: %d", n)
		}
	})

	t.Run("delete", func(t *testing.T) {
		for _, q := range []string{"", "?id=", "?id=abc", "?id=-1", "?id=1.5", "?id=999999"} {
			expectNF(t, e.a.send("DELETE", "/api/global-unsubscribes/delete"+q, nil), "Record Not Found")
		}
		id := strconv.FormatInt(got[0].ID, 10)
		expectNF(t, e.b.send("DELETE", "/api/global-unsubscribes/delete?id="+id, nil), "Record Not Found")
		expectOK(t, e.a.send("DELETE", "/api/global-unsubscribes/delete?id="+id, nil), "Deleted Successfully")
		expectNF(t, e.a.send("DELETE", "/api/global-unsubscribes/delete?id="+id, nil), "Record Not Found")
	})

	t.Run("bulk delete", func(t *testing.T) {
		rest := globalList(t, e.a)
		a, b := strconv.FormatInt(rest[0].ID, 10), strconv.FormatInt(rest[1].ID, 10)
		expectVAL(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", form()), map[string][]string{"strIds": {"The str ids field is required."}})
		// All or nothing: one unknown id deletes none.
		expectNF(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", form("strIds[0]", a, "strIds[1]", "999999")), "Record Not Found")
		expectNF(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", form("strIds[0]", a, "strIds[1]", "x")), "Record Not Found")
		expectNF(t, e.b.send("POST", "/api/global-unsubscribes/bulk-delete", form("strIds[0]", a)), "Record Not Found")
		if n := len(globalList(t, e.a)); n != 2 {
			t.Fatalf("a refused bulk delete deleted rows: %d left", n)
		}
		expectOK(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", form("strIds[]", a, "strIds[]", b)), "Deleted Successfully")
		if n := len(globalList(t, e.a)); n != 0 {
			t.Fatalf("%d left after bulk delete", n)
		}
	})
}

func TestBulkDeleteArrayForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i, body := range []any{
		func(ids []string) any { return form("strIds[1]", ids[1], "strIds[0]", ids[0]) },
		func(ids []string) any { return form("strIds[]", ids[0], "strIds[]", ids[1]) },
		func(ids []string) any { return form("strIds", ids[0], "strIds", ids[1]) },
		func(ids []string) any { return fmt.Sprintf(`{"strIds":[%s,"%s"]}`, ids[0], ids[1]) },
	} {
		expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", fmt.Sprintf("x%d@example.com,y%d@example.com", i, i))), "Added Successfully")
		rows := globalList(t, e.a)
		ids := []string{strconv.FormatInt(rows[0].ID, 10), strconv.FormatInt(rows[1].ID, 10)}
		expectOK(t, e.a.send("POST", "/api/global-unsubscribes/bulk-delete", body.(func([]string) any)(ids)), "Deleted Successfully")
		if n := len(globalList(t, e.a)); n != 0 {
			t.Fatalf("form %d: %d left", i, n)
		}
	}
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var addrs string
	for i := 0; i < 2500; i++ {
		addrs += fmt.Sprintf("u%04d@example.com,", i)
	}
	expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", addrs)), "Added Successfully")
	all := globalList(t, e.a) // more than one batch and past the stream threshold
	if len(all) != 2500 {
		t.Fatalf("want 2500, got %d", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID {
			t.Fatalf("not in id order at %d", i)
		}
	}
	page := list[unsubscriber](t, e.a.send("GET", "/api/global-unsubscribes?page=2&per_page=100", nil), "unSubscribers")
	if len(page) != 100 || page[0].ID != all[100].ID {
		t.Fatalf("page 2: %d rows, first %+v", len(page), page)
	}
}

func TestUnsubscribeGroups(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	groups := func(c *client) []group {
		return list[group](t, c.send("GET", "/api/unsubscribes-groups", nil), "unsubscribesGroups")
	}
	expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/save", form("group_name", "Newsletter", "description", "Weekly news", "is_display", "1")), "Saved Successfully")
	expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/save", `{"group_name":"Offers","description":"Deals","is_display":false}`), "Saved Successfully")
	gs := groups(e.a)
	if len(gs) != 2 || gs[0].GroupName != "Newsletter" || gs[0].IsDisplay != 1 || gs[1].IsDisplay != 0 || gs[0].RandID == "" {
		t.Fatalf("groups: %+v", gs)
	}
	if gs[0].UnsubscribeClientsCount == nil || *gs[0].UnsubscribeClientsCount != 0 {
		t.Fatalf("unsubscribe_clients_count missing: %+v", gs[0])
	}
	checkTimestamps(t, gs[0].CreatedAt, gs[0].UpdatedAt)
	if len(groups(e.b)) != 0 {
		t.Fatal("account b sees a's groups")
	}
	gid := strconv.FormatInt(gs[0].ID, 10)

	t.Run("save validation", func(t *testing.T) {
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/save", form()), map[string][]string{
			"group_name":  {"The group name field is required."},
			"description": {"The description field is required."},
			"is_display":  {"The is display field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/save", form("group_name", "x", "description", "y", "is_display", "maybe")), map[string][]string{
			"is_display": {"The is display field must be true or false."},
		})
	})

	t.Run("details", func(t *testing.T) {
		r := e.a.send("GET", "/api/unsubscribes-groups/details?id="+gid, nil)
		if r.Code != 200 {
			t.Fatal(r.raw)
		}
		var m map[string]group
		if err := jsonUnmarshal(r.Message, &m); err != nil {
			t.Fatal(err)
		}
		g, ok := m["unsubscribesGroup"]
		if !ok || g.ID != gs[0].ID || g.Description != "Weekly news" || g.UnsubscribeClientsCount != nil {
			t.Fatalf("details: %s", r.Message)
		}
		for _, q := range []string{"", "?id=abc", "?id=0", "?id=424242"} {
			expectNF(t, e.a.send("GET", "/api/unsubscribes-groups/details"+q, nil), "Record Not Found")
		}
		expectNF(t, e.b.send("GET", "/api/unsubscribes-groups/details?id="+gid, nil), "Record Not Found")
	})

	t.Run("update", func(t *testing.T) {
		expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/update?id="+gid, form("group_name", "News", "description", "Monthly", "is_display", "0")), "Updated Successfully")
		g := groups(e.a)[0]
		if g.GroupName != "News" || g.Description != "Monthly" || g.IsDisplay != 0 {
			t.Fatalf("not updated: %+v", g)
		}
		// The id may come in the body too.
		expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/update", form("id", gid, "group_name", "News2", "description", "Monthly", "is_display", "1")), "Updated Successfully")
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/update?id="+gid, form("group_name", "News")), map[string][]string{
			"description": {"The description field is required."},
			"is_display":  {"The is display field is required."},
		})
		expectNF(t, e.a.send("POST", "/api/unsubscribes-groups/update?id=abc", form("group_name", "a", "description", "b", "is_display", "1")), "Record Not Found")
		expectNF(t, e.b.send("POST", "/api/unsubscribes-groups/update?id="+gid, form("group_name", "a", "description", "b", "is_display", "1")), "Record Not Found")
		if groups(e.a)[0].GroupName != "News2" {
			t.Fatal("b changed a's group")
		}
	})

	t.Run("recipients", func(t *testing.T) {
		recipients := func(c *client, q string) reply {
			return c.send("GET", "/api/unsubscribes-groups/recipients-list"+q, nil)
		}
		expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", gid, "email_address", "Zed@Example.com,amy@example.com")), "Added Successfully")
		expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", gid, "email_address", "zed@example.com")), "Added Successfully")
		rs := list[unsubscriber](t, recipients(e.a, "?groupId="+gid), "recipients")
		if len(rs) != 2 || rs[0].EmailAddress != "zed@example.com" || rs[0].UnsubscribeGroupsID == nil || *rs[0].UnsubscribeGroupsID != gs[0].ID {
			t.Fatalf("recipients: %+v", rs)
		}
		checkTimestamps(t, rs[0].CreatedAt)
		if c := groups(e.a)[0].UnsubscribeClientsCount; *c != 2 {
			t.Fatalf("count: %d", *c)
		}
		// Group recipients are not global unsubscribers.
		if n := len(globalList(t, e.a)); n != 0 {
			t.Fatalf("group recipients listed as global: %d", n)
		}
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/manually-add", form()), map[string][]string{
			"unsubscribe_groups_id": {"The unsubscribe groups id field is required."},
			"email_address":         {"The email address field is required."},
		})
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", gid, "email_address", "nope")), map[string][]string{
			"email_address": {"The email address must be a valid email address."},
		})
		expectNF(t, e.b.send("POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", gid, "email_address", "b@example.com")), "Record Not Found")
		expectNF(t, e.a.send("POST", "/api/unsubscribes-groups/manually-add", form("unsubscribe_groups_id", "abc", "email_address", "b@example.com")), "Record Not Found")

		for _, q := range []string{"", "?groupId=abc", "?groupId=999999"} {
			expectNF(t, recipients(e.a, q), "Record Not Found")
		}
		expectNF(t, recipients(e.b, "?groupId="+gid), "Record Not Found")

		rid := strconv.FormatInt(rs[0].ID, 10)
		expectNF(t, e.b.send("DELETE", "/api/unsubscribes-groups/recipients-delete?id="+rid, nil), "Record Not Found")
		expectNF(t, e.a.send("DELETE", "/api/unsubscribes-groups/recipients-delete?id=x", nil), "Record Not Found")
		expectOK(t, e.a.send("DELETE", "/api/unsubscribes-groups/recipients-delete?id="+rid, nil), "Deleted Successfully")
		expectNF(t, e.a.send("DELETE", "/api/unsubscribes-groups/recipients-delete?id="+rid, nil), "Record Not Found")

		// A global unsubscriber's id is not a group recipient.
		expectOK(t, e.a.send("POST", "/api/global-unsubscribes/save", form("email_address", "g@example.com")), "Added Successfully")
		gl := strconv.FormatInt(globalList(t, e.a)[0].ID, 10)
		expectNF(t, e.a.send("DELETE", "/api/unsubscribes-groups/recipients-delete?id="+gl, nil), "Record Not Found")
		expectNF(t, e.a.send("DELETE", "/api/global-unsubscribes/delete?id="+strconv.FormatInt(rs[1].ID, 10), nil), "Record Not Found")

		other := strconv.FormatInt(rs[1].ID, 10)
		expectVAL(t, e.a.send("POST", "/api/unsubscribes-groups/recipients-bulk-delete", form()), map[string][]string{"strIds": {"The str ids field is required."}})
		expectNF(t, e.a.send("POST", "/api/unsubscribes-groups/recipients-bulk-delete", form("strIds[0]", other, "strIds[1]", gl)), "Record Not Found")
		expectNF(t, e.b.send("POST", "/api/unsubscribes-groups/recipients-bulk-delete", form("strIds[0]", other)), "Record Not Found")
		expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/recipients-bulk-delete", form("strIds[0]", other)), "Deleted Successfully")
		if rs := list[unsubscriber](t, recipients(e.a, "?groupId="+gid), "recipients"); len(rs) != 0 {
			t.Fatalf("left: %+v", rs)
		}
	})
}

type notification struct {
	ID           int64  `json:"id"`
	UserID       int64  `json:"user_id"`
	EmailAddress string `json:"email_address"`
	EmailOwner   string `json:"email_owner"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
}

func TestNotificationRecipients(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ls := func(c *client) []notification {
		return list[notification](t, c.send("GET", "/api/notification-recipients", nil), "notifications")
	}
	expectOK(t, e.a.send("POST", "/api/notification-recipient/save", form("email_address", "Ops@Example.com", "email_owner", "Ops team")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/notification-recipient/save", form("email_address", "ops@example.com", "email_owner", "Operations")), "Added Successfully")
	expectOK(t, e.a.send("POST", "/api/notification-recipient/save", `{"email_address":"ceo@example.com","email_owner":"Ceo"}`), "Added Successfully")
	ns := ls(e.a)
	if len(ns) != 2 || ns[0].EmailAddress != "ops@example.com" || ns[0].EmailOwner != "Operations" || ns[0].UserID != e.a.id {
		t.Fatalf("notifications: %+v", ns)
	}
	checkTimestamps(t, ns[0].CreatedAt, ns[0].UpdatedAt)
	if len(ls(e.b)) != 0 {
		t.Fatal("b sees a's notification recipients")
	}
	expectVAL(t, e.a.send("POST", "/api/notification-recipient/save", form()), map[string][]string{
		"email_address": {"The email address field is required."},
		"email_owner":   {"The name field is required"},
	})
	expectVAL(t, e.a.send("POST", "/api/notification-recipient/save", form("email_address", "x@", "email_owner", "X")), map[string][]string{
		"email_address": {"The email address must be a valid email address."},
	})

	id := strconv.FormatInt(ns[0].ID, 10)
	other := strconv.FormatInt(ns[1].ID, 10)
	for _, q := range []string{"", "?id=abc", "?id=424242"} {
		expectNF(t, e.a.send("DELETE", "/api/notification-recipient/delete"+q, nil), "Record Not Found")
	}
	expectNF(t, e.b.send("DELETE", "/api/notification-recipient/delete?id="+id, nil), "Record Not Found")
	expectOK(t, e.a.send("DELETE", "/api/notification-recipient/delete?id="+id, nil), "Deleted Successfully")

	expectVAL(t, e.a.send("POST", "/api/notification-recipient/bulk-delete", form()), map[string][]string{"strIds": {"The str ids field is required."}})
	expectNF(t, e.a.send("POST", "/api/notification-recipient/bulk-delete", form("strIds[0]", other, "strIds[1]", id)), "Record Not Found")
	expectNF(t, e.b.send("POST", "/api/notification-recipient/bulk-delete", form("strIds[0]", other)), "Record Not Found")
	expectOK(t, e.a.send("POST", "/api/notification-recipient/bulk-delete", form("strIds[0]", other)), "Deleted Successfully")
	if len(ls(e.a)) != 0 {
		t.Fatal("not deleted")
	}
}

func TestMultipartBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	body := "--B\r\nContent-Disposition: form-data; name=\"group_name\"\r\n\r\nMP\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\nFrom multipart\r\n" +
		"--B\r\nContent-Disposition: form-data; name=\"is_display\"\r\n\r\n1\r\n--B--\r\n"
	expectOK(t, e.a.send("POST", "/api/unsubscribes-groups/save", rawBody{"multipart/form-data; boundary=B", body}), "Saved Successfully")
	gs := list[group](t, e.a.send("GET", "/api/unsubscribes-groups", nil), "unsubscribesGroups")
	if len(gs) != 1 || gs[0].Description != "From multipart" {
		t.Fatalf("%+v", gs)
	}
}
