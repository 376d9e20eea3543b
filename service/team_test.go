package service_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"herald/dbtest"
	"herald/delivery"
	"herald/models"
	"herald/service"
	"herald/service/servicetest"
)

// roleTable is every role rule, written out: role x action -> allowed.
// Editors prepare but never send; viewers only read.
var roleTable = map[service.Action][4]bool{
	//                        owner  admin  editor viewer
	service.ActRead:          {true, true, true, true},
	service.ActOwnLogin:      {true, true, true, true},
	service.ActPrepare:       {true, true, true, false},
	service.ActImport:        {true, true, true, false},
	service.ActSend:          {true, true, false, false},
	service.ActRunAutomation: {true, true, false, false},
	service.ActDeleteList:    {true, true, false, false},
	service.ActSuppressions:  {true, true, false, false},
	service.ActSenders:       {true, true, false, false},
	service.ActSettings:      {true, true, false, false},
	service.ActKeys:          {true, true, false, false},
	service.ActTeam:          {true, true, false, false},
	service.ActAudit:         {true, true, false, false},
}

var allRoles = []service.Role{service.RoleOwner, service.RoleAdmin, service.RoleEditor, service.RoleViewer}

// TestRoleRules checks each rule through Authorize on the database (both,
// with HERALD_TEST_DATABASE): allowed actions pass, refused ones answer
// forbidden with a message naming the role and leave a "denied" line in
// the audit log, by the member who tried.
func TestRoleRules(t *testing.T) {
	t.Parallel()
	svc := dbtest.Service(t)
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada", Email: "ada@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(service.Actions()), len(roleTable); got != want {
		t.Fatalf("%d actions in the service's table, %d in the test's", got, want)
	}
	denied := 0
	for _, action := range service.Actions() {
		want, ok := roleTable[action]
		if !ok {
			t.Fatalf("action %q is not in the test's table", action)
		}
		for i, role := range allRoles {
			t.Run(string(role)+"/"+string(action), func(t *testing.T) {
				if got := service.Can(role, action); got != want[i] {
					t.Fatalf("Can(%s, %s) = %v, want %v", role, action, got, want[i])
				}
				a := service.Actor{AccountID: u.ID, MemberID: int64(i), Role: role, Name: string(role) + "@example.com"}
				err := svc.Team.Authorize(service.WithActor(ctx, a), a, action, "POST /somewhere")
				if want[i] {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				denied++
				if service.ErrorCode(err) != service.CodeForbidden || !strings.Contains(err.Error(), role.Label()) {
					t.Fatalf("refusal: %v", err)
				}
			})
		}
	}
	if service.Can("nobody", service.ActRead) || service.Can(service.RoleOwner, "unknown") {
		t.Fatal("an unknown role or action is allowed")
	}
	rows, _, err := svc.Audit.List(ctx, u.ID, 1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		if r.Action == string(service.AuditDenied) {
			n++
			if r.MemberID == 0 || !strings.HasSuffix(r.Actor, "@example.com") || r.Target != "POST /somewhere" || !service.Action(r.Detail).Known() {
				t.Fatalf("denied line without its member: %+v", r)
			}
		}
	}
	if n != denied || denied == 0 {
		t.Fatalf("%d denied lines, want %d", n, denied)
	}
}

// invitationTokens are the tokens of the invitation links mailed, in order.
func invitationTokens(mem *delivery.MemoryOutbox) []string {
	var out []string
	for _, m := range mem.Messages() {
		body := strings.ReplaceAll(string(m.Data), "=\r\n", "")
		i := strings.Index(body, "/invitations/")
		if i < 0 {
			continue
		}
		tok := body[i+len("/invitations/"):]
		end := strings.IndexFunc(tok, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
		})
		out = append(out, tok[:end])
	}
	return out
}

// TestTeamInvitations: an invitation is mailed with a link that works
// once and for 7 days; accepting it makes a member that logs in with its
// own password and acts on the owner's account; an address that already
// logs in is refused; revoking an invitation ends its link; changing a
// role and removing a member take effect at once on another process.
func TestTeamInvitations(t *testing.T) {
	t.Parallel()
	mem := &delivery.MemoryOutbox{}
	clk := dbtest.NewClock(time.Now())
	cfg := service.Config{Transport: delivery.NewOutbox(mem), BaseURL: "http://herald.test", SystemFrom: "no-reply@herald.test", Now: clk.Now}
	procs := dbtest.Processes(t, 2, cfg)
	svc, other := procs[0], procs[1]
	ctx := context.Background()
	owner, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada", Email: "ada@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	stranger, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Eve", Email: "eve@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	ownerCtx := service.WithActor(ctx, service.Actor{AccountID: owner.ID, Role: service.RoleOwner, Name: "Ada <ada@example.com>"})

	// Validation.
	if _, err := svc.Team.Invite(ownerCtx, owner.ID, "not an address", service.RoleEditor); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("bad address: %v", err)
	}
	if _, err := svc.Team.Invite(ownerCtx, owner.ID, "bob@example.com", service.RoleOwner); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("owner role: %v", err)
	}
	if _, err := svc.Team.Invite(ownerCtx, owner.ID, "ada@example.com", service.RoleAdmin); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("the owner invited: %v", err)
	}

	inv, err := svc.Team.Invite(ownerCtx, owner.ID, "Bob@Example.com", service.RoleEditor)
	if err != nil {
		t.Fatal(err)
	}
	if inv.Email != "bob@example.com" || inv.InvitedBy != "Ada <ada@example.com>" {
		t.Fatalf("invitation: %+v", inv)
	}
	if _, err := svc.Team.Invite(ownerCtx, owner.ID, "eve@example.com", service.RoleViewer); err != nil {
		t.Fatal(err)
	}
	tokens := invitationTokens(mem)
	if len(tokens) != 2 {
		t.Fatalf("links mailed: %v", tokens)
	}
	var stored models.Invitation
	if err := svc.DB.R.Where("email = ?", "bob@example.com").First(&stored).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored.TokenHash), tokens[0]) || len(stored.TokenHash) != 32 {
		t.Fatal("the token is not stored hashed")
	}
	// The invitation mail is filed under the inviting account (Outbox page).
	if got := mem.Messages()[0]; !strings.Contains(string(got.Data), "Subject: Ada invited you to join their team on Herald") {
		t.Fatalf("mail: %s", got.Data)
	}
	pending, err := svc.Team.Invitations(ctx, owner.ID)
	if err != nil || len(pending) != 2 {
		t.Fatalf("pending: %v %v", pending, err)
	}
	if other, err := svc.Team.Invitations(ctx, stranger.ID); err != nil || len(other) != 0 {
		t.Fatalf("another account sees %v %v", other, err)
	}

	// Eve already logs in to her own account: her link says so.
	if _, err := svc.Team.Accept(ctx, tokens[1], service.AcceptInput{Name: "Eve", Password: "another-passphrase-2"}); service.ErrorCode(err) != service.CodeConflict {
		t.Fatalf("accepted by an address with a login: %v", err)
	}

	// Bob accepts: a short password is refused, then it works once.
	if _, err := svc.Team.Accept(ctx, tokens[0], service.AcceptInput{Name: "Bob", Password: "short"}); passwordProblem(err) == "" {
		t.Fatalf("short password: %v", err)
	}
	p, err := other.Team.Invitation(ctx, tokens[0])
	if err != nil || p.AccountName != "Ada" || p.Role != "editor" {
		t.Fatalf("invitation page: %+v %v", p, err)
	}
	bob, err := svc.Team.Accept(ctx, tokens[0], service.AcceptInput{Name: "Bob", Password: "bobs-passphrase-1"})
	if err != nil || bob.UserID != owner.ID || bob.Role != "editor" {
		t.Fatalf("accept: %+v %v", bob, err)
	}
	if _, err := svc.Team.Accept(ctx, tokens[0], service.AcceptInput{Name: "Bob", Password: "bobs-passphrase-1"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("the link twice: %v", err)
	}
	acct, m, err := other.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: "bobs-passphrase-1"})
	if err != nil || acct.ID != owner.ID || m == nil || m.ID != bob.ID {
		t.Fatalf("member sign-in: %+v %+v %v", acct, m, err)
	}
	if _, _, err := other.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: "wrong-passphrase-1"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("wrong password: %v", err)
	}
	// His address cannot open an account now.
	if _, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Bob", Email: "bob@example.com", Password: "bobs-passphrase-1"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("account with a member's address: %v", err)
	}
	// A sign-up with it mails the "you have an account" notice, no link.
	if _, err := svc.Accounts.SignUp(ctx, service.AccountInput{Name: "Bob", Email: "bob@example.com", Password: "bobs-passphrase-1"}); err != nil {
		t.Fatal(err)
	}
	var pendingSignups int64
	if err := svc.DB.R.Table("pending_signups").Where("email = ?", "bob@example.com").Count(&pendingSignups).Error; err != nil || pendingSignups != 0 {
		t.Fatalf("%d pending sign-ups for a member's address (%v)", pendingSignups, err)
	}
	if last := mem.Messages()[len(mem.Messages())-1]; !strings.Contains(string(last.Data), "You already have a Herald account") {
		t.Fatalf("last mail: %.300s", last.Data)
	}
	// Another account cannot see or change him.
	if _, err := svc.Team.Member(ctx, stranger.ID, bob.ID); !service.IsNotFound(err) {
		t.Fatalf("member of another account: %v", err)
	}
	if err := svc.Team.Remove(ctx, stranger.ID, bob.ID); !service.IsNotFound(err) {
		t.Fatalf("removed by another account: %v", err)
	}

	// His session, checked by the other process, carries the member.
	token, err := svc.Sessions.StartMember(ctx, owner.ID, bob.ID)
	if err != nil {
		t.Fatal(err)
	}
	live, err := other.Sessions.Check(ctx, token)
	if err != nil || live.UserID != owner.ID || live.MemberID != bob.ID {
		t.Fatalf("session: %+v %v", live, err)
	}
	ownerToken, err := svc.Sessions.Start(ctx, owner.ID)
	if err != nil {
		t.Fatal(err)
	}

	// A role change is read at once by the other process.
	if err := svc.Team.SetRole(ownerCtx, owner.ID, bob.ID, service.RoleViewer); err != nil {
		t.Fatal(err)
	}
	got, err := other.Team.Member(ctx, owner.ID, bob.ID)
	if err != nil || got.Role != "viewer" {
		t.Fatalf("role after change: %+v %v", got, err)
	}
	if err := svc.Team.SetRole(ownerCtx, owner.ID, bob.ID, "owner"); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("made owner: %v", err)
	}

	// Revoking an invitation ends its link.
	inv2, err := svc.Team.Invite(ownerCtx, owner.ID, "carol@example.com", service.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	carolToken := invitationTokens(mem)[2]
	if err := svc.Team.Revoke(ctx, stranger.ID, inv2.ID); !service.IsNotFound(err) {
		t.Fatalf("revoked by another account: %v", err)
	}
	if err := svc.Team.Revoke(ownerCtx, owner.ID, inv2.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Team.Invitation(ctx, carolToken); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("revoked link: %v", err)
	}

	// Links expire after 7 days.
	if _, err := svc.Team.Invite(ownerCtx, owner.ID, "dan@example.com", service.RoleViewer); err != nil {
		t.Fatal(err)
	}
	danToken := invitationTokens(mem)[3]
	clk.Advance(service.InvitationTTL - time.Minute)
	if _, err := other.Team.Invitation(ctx, danToken); err != nil {
		t.Fatalf("link before 7 days: %v", err)
	}
	clk.Advance(2 * time.Minute)
	if _, err := svc.Team.Accept(ctx, danToken, service.AcceptInput{Name: "Dan", Password: "dans-passphrase-1"}); service.ErrorCode(err) != service.CodeNotFound {
		t.Fatalf("expired link: %v", err)
	}
	clk.Advance(-service.InvitationTTL) // back, so the sessions live

	// Removing him ends his sessions on every process, not the owner's.
	if err := svc.Team.Remove(ownerCtx, owner.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Sessions.Check(ctx, token); !service.IsNotFound(err) {
		t.Fatalf("removed member's session: %v", err)
	}
	if _, err := other.Sessions.Check(ctx, ownerToken); err != nil {
		t.Fatalf("owner's session after the removal: %v", err)
	}
	if _, _, err := other.Accounts.SignIn(ctx, service.LoginInput{Email: "bob@example.com", Password: "bobs-passphrase-1"}); service.ErrorCode(err) != service.CodeValidation {
		t.Fatalf("removed member logs in: %v", err)
	}

	// The audit log tells it, newest first, by whom.
	rows, more, err := svc.Audit.List(ctx, owner.ID, 1)
	if err != nil || more {
		t.Fatal(err, more)
	}
	var seen []string
	for _, r := range rows {
		seen = append(seen, r.Action+" "+r.Target)
	}
	want := []string{
		"member.removed bob@example.com",
		"member.invited dan@example.com",
		"invitation.revoked carol@example.com",
		"member.invited carol@example.com",
		"member.role_changed bob@example.com",
		"member.joined bob@example.com",
		"member.invited eve@example.com",
		"member.invited bob@example.com",
	}
	if strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
	if rows[5].MemberID != bob.ID || !strings.Contains(rows[5].Actor, "Bob") || rows[0].Actor != "Ada <ada@example.com>" {
		t.Fatalf("actors: %+v", rows)
	}
	if rows, _, _ := svc.Audit.List(ctx, stranger.ID, 1); len(rows) != 0 {
		t.Fatalf("another account's log: %+v", rows)
	}
}

// TestAuditLog: the audited service actions write their line (with the
// API as author when no one is logged in), and the log pages newest first.
func TestAuditLog(t *testing.T) {
	t.Parallel()
	svc, clk := clockedService(t, service.Config{})
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada", Email: "ada@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Accounts.RotateKeys(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	// Named keys made and revoked are audited too (then deleted from the
	// log, so the rest of the test reads as before).
	key, _, err := svc.APIKeys.Create(ctx, u.ID, service.APIKeyInput{Name: "Shop", Scope: "read"})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.APIKeys.Revoke(ctx, u.ID, key.ID); err != nil {
		t.Fatal(err)
	}
	if err := svc.APIKeys.Revoke(ctx, u.ID, key.ID); !service.IsNotFound(err) {
		t.Fatalf("revoked twice: %v", err)
	}
	var keyLines []string
	if err := svc.DB.R.Table("audit_log").Where("user_id = ? AND action LIKE ?", u.ID, "api_key.%").Order("id").
		Pluck("action || ' ' || target", &keyLines).Error; err != nil {
		t.Fatal(err)
	}
	if strings.Join(keyLines, "|") != "api_key.created Shop|api_key.revoked Shop" {
		t.Fatalf("named key lines: %q", keyLines)
	}
	if err := svc.DB.W.Exec("DELETE FROM audit_log WHERE action LIKE ?", "api_key.%").Error; err != nil {
		t.Fatal(err)
	}
	ct, err := svc.ContactTypes.Create(ctx, u.ID, "Newsletter")
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Second)
	actx := service.WithActor(ctx, service.Actor{AccountID: u.ID, MemberID: 7, Role: service.RoleAdmin, Name: "Grace <grace@example.com>"})
	if err := svc.ContactTypes.Delete(actx, u.ID, ct.ID); err != nil {
		t.Fatal(err)
	}
	rows, _, err := svc.Audit.List(ctx, u.ID, 1)
	if err != nil || len(rows) != 2 {
		t.Fatalf("%+v %v", rows, err)
	}
	if rows[0].Action != "contact_type.deleted" || rows[0].Target != "Newsletter" || rows[0].MemberID != 7 || rows[0].Actor != "Grace <grace@example.com>" {
		t.Fatalf("newest: %+v", rows[0])
	}
	if rows[1].Action != "keys.rotated" || rows[1].Actor != "API key or command line" {
		t.Fatalf("oldest: %+v", rows[1])
	}
	// Paging: 50 a page, newest first.
	for i := 0; i < service.AuditPageSize; i++ {
		clk.Advance(time.Millisecond)
		if err := svc.Audit.Record(actx, u.ID, service.AuditImportStarted, "f.csv", ""); err != nil {
			t.Fatal(err)
		}
	}
	p1, more, err := svc.Audit.List(ctx, u.ID, 1)
	if err != nil || !more || len(p1) != service.AuditPageSize || p1[0].Action != "import.started" {
		t.Fatalf("page 1: %d %v %v", len(p1), more, err)
	}
	p2, more, err := svc.Audit.List(ctx, u.ID, 2)
	if err != nil || more || len(p2) != 2 || p2[1].Action != "keys.rotated" {
		t.Fatalf("page 2: %+v %v %v", p2, more, err)
	}
}

// TestAuditedActions: each audited service action writes its line, by
// the actor on the context: a send started and one scheduled, an
// automation set live and paused, an import started, a segment and a
// contact type deleted.
func TestAuditedActions(t *testing.T) {
	t.Parallel()
	f := servicetest.NewSendFixture(t, false)
	ctx := service.WithActor(f.Ctx, service.Actor{AccountID: f.Acct, MemberID: 3, Role: service.RoleAdmin, Name: "Grace <grace@example.com>"})
	typeID := f.ContactType("Customers", "ann@example.com")
	to := []string{"contacts_" + strconv.FormatInt(typeID, 10)}
	if _, err := f.Svc.SingleSends.Create(ctx, f.Acct, f.Input("Now", to, nil)); err != nil {
		t.Fatal(err)
	}
	later := f.Input("Later", to, nil)
	later.ScheduleType, later.ScheduleDate, later.ScheduleTime = "1", f.Now().AddDate(0, 0, 3).Format("2006-01-02"), "10:00"
	if _, err := f.Svc.SingleSends.Create(ctx, f.Acct, later); err != nil {
		t.Fatal(err)
	}
	a := f.Automation(typeID, "0")
	if err := f.Svc.Automations.SetLive(ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Automations.Pause(ctx, f.Acct, a.Utr); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Imports.Start(ctx, f.Acct, typeID, "people.csv", 10); err != nil {
		t.Fatal(err)
	}
	seg, err := f.Svc.Segments.Create(ctx, f.Acct, service.SegmentInput{ContactTypeID: strconv.FormatInt(typeID, 10), SegmentName: "Everyone"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.Segments.Delete(ctx, f.Acct, seg.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.Svc.ContactTypes.Delete(ctx, f.Acct, typeID); err != nil {
		t.Fatal(err)
	}
	rows, _, err := f.Svc.Audit.List(f.Ctx, f.Acct, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range rows {
		if r.MemberID != 3 || r.Actor != "Grace <grace@example.com>" {
			t.Errorf("line without its actor: %+v", r)
		}
		got[r.Action] = r.Target
	}
	want := map[string]string{
		"send.started": "Now", "send.scheduled": "Later", "automation.live": "Onboarding", "automation.paused": "Onboarding",
		"import.started": "people.csv", "segment.deleted": "Everyone", "contact_type.deleted": "Customers",
	}
	for action, target := range want {
		if got[action] != target {
			t.Errorf("%s: %q, want %q", action, got[action], target)
		}
	}
	if len(rows) != len(want) {
		t.Errorf("%d lines, want %d: %+v", len(rows), len(want), rows)
	}
}

// TestInvitationThrottle: mails to one address are throttled as sign-up
// mails are, and an account's invitations over every address too.
func TestInvitationThrottle(t *testing.T) {
	t.Parallel()
	svc, _ := clockedService(t, service.Config{})
	ctx := context.Background()
	u, _, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Ada", Email: "ada@example.com", Password: "test-passphrase-9"})
	if err != nil {
		t.Fatal(err)
	}
	// One address: three mails at once, then a wait.
	for i := 0; i < 3; i++ {
		if _, err := svc.Team.Invite(ctx, u.ID, "bob@example.com", service.RoleViewer); err != nil {
			t.Fatalf("invitation %d: %v", i+1, err)
		}
	}
	_, err = svc.Team.Invite(ctx, u.ID, "bob@example.com", service.RoleViewer)
	if service.ErrorCode(err) != service.CodeRateLimited || service.RetryAfter(err) <= 0 || !strings.Contains(err.Error(), "this address") {
		t.Fatalf("fourth to one address: %v", err)
	}
	// Many addresses: 20 for the account (3 counted above and the refused
	// one not), then a wait.
	for i := 0; i < 17; i++ {
		if _, err := svc.Team.Invite(ctx, u.ID, "p"+strconv.Itoa(i)+"@example.com", service.RoleViewer); err != nil {
			t.Fatalf("invitation to p%d: %v", i, err)
		}
	}
	_, err = svc.Team.Invite(ctx, u.ID, "zed@example.com", service.RoleViewer)
	if service.ErrorCode(err) != service.CodeRateLimited || !strings.Contains(err.Error(), "This account") {
		t.Fatalf("21st invitation: %v", err)
	}
}
