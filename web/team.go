package web

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/team"
)

// mountTeam registers the Team page, the audit log (owner and admins) and
// nothing else: the invitation's own page is open (Mount).
func (w *Web) mountTeam(r router) {
	r.get(team.URL, service.ActTeam, w.teamPage)
	r.post(team.InviteURL, service.ActTeam, w.invite)
	r.post("/team/invitations/:id/delete", service.ActTeam, w.revokeInvitation)
	r.post("/team/members/:id/role", service.ActTeam, w.setMemberRole)
	r.post("/team/members/:id/delete", service.ActTeam, w.removeMember)
	r.get(team.AuditURL, service.ActAudit, w.auditLog)
}

func roleOptions() []views.Option {
	var out []views.Option
	for _, r := range service.MemberRoles {
		out = append(out, views.Option{Value: string(r), Label: r.Label()})
	}
	return out
}

func (w *Web) teamPage(c *fiber.Ctx) error {
	return w.renderTeam(c, fiber.StatusOK, team.InviteForm{Role: string(service.RoleEditor)})
}

// renderTeam shows the Team page with the invite form f.
func (w *Web) renderTeam(c *fiber.Ctx, status int, f team.InviteForm) error {
	ctx, acct := c.UserContext(), accountID(c)
	members, err := w.svc.Team.Members(ctx, acct)
	if err != nil {
		return err
	}
	invs, err := w.svc.Team.Invitations(ctx, acct)
	if err != nil {
		return err
	}
	f.CSRF, f.Roles = csrf(c), roleOptions()
	d := team.Data{Owner: user(c), Members: members, Invitations: invs, Invite: f, Roles: roleOptions(), Self: actor(c).MemberID, CSRF: csrf(c)}
	return page(c, status, "Team", views.NavTeam, team.Page(d))
}

// invite mails an invitation; a problem shows in the form (422, or 429
// when the address got several mails lately).
func (w *Web) invite(c *fiber.Ctx) error {
	f := team.InviteForm{Email: formValue(c, "email"), Role: formValue(c, "role")}
	inv, err := w.svc.Team.Invite(c.UserContext(), accountID(c), f.Email, service.Role(f.Role))
	if isValidation(err) || service.ErrorCode(err) == service.CodeRateLimited {
		f.Errors = fieldErrors(err)
		status := statusOf(err)
		if status == fiber.StatusTooManyRequests {
			_, f.Alert = describe(status, err)
			setRetryAfter(c, err)
		}
		return w.renderTeam(c, status, f)
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Invitation mailed to "+inv.Email+". The link works for 7 days.")
	return c.Redirect(team.URL, fiber.StatusSeeOther)
}

func idParam(c *fiber.Ctx) (int64, error) {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, service.ErrNotFound
	}
	return id, nil
}

func (w *Web) revokeInvitation(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Team.Revoke(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Invitation revoked: its link no longer works.")
	return c.Redirect(team.URL, fiber.StatusSeeOther)
}

func (w *Web) setMemberRole(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	role := service.Role(formValue(c, "role"))
	if err := w.svc.Team.SetRole(c.UserContext(), accountID(c), id, role); err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "Role changed to "+role.Label()+". It applies from the member's next click.")
	return c.Redirect(team.URL, fiber.StatusSeeOther)
}

func (w *Web) removeMember(c *fiber.Ctx) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	if err := w.svc.Team.Remove(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	if id == actor(c).MemberID {
		// Removed oneself: the session is gone.
		s := sess(c)
		s.logout()
		csrfToken(c, s)
		return c.Redirect("/login", fiber.StatusSeeOther)
	}
	w.flash(c, views.FlashSuccess, "Member removed and logged out.")
	return c.Redirect(team.URL, fiber.StatusSeeOther)
}

// auditLog shows a page of the audit log, newest first.
func (w *Web) auditLog(c *fiber.Ctx) error {
	p, _ := strconv.Atoi(c.Query("page"))
	if p < 1 {
		p = 1
	}
	rows, more, err := w.svc.Audit.List(c.UserContext(), accountID(c), p)
	if err != nil {
		return err
	}
	d := team.AuditData{Page: p, More: more, Empty: len(rows) == 0 && p == 1}
	for _, r := range rows {
		row := team.AuditRow{At: r.At(), Actor: r.Actor, Action: service.AuditLabel(r.Action), Target: r.Target, Detail: r.Detail}
		if r.Action == string(service.AuditDenied) {
			row.Denied = true
			row.Action += ": " + service.RefusalOf(r.Detail)
			row.Detail = ""
		}
		d.Rows = append(d.Rows, row)
	}
	return page(c, fiber.StatusOK, "Audit log", views.NavAudit, team.Audit(d))
}

// invitationPage is the mailed link: a form for the name and password (a
// GET changes nothing: mail gateways open links to scan them).
func (w *Web) invitationPage(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	inv, err := w.svc.Team.Invitation(c.UserContext(), token)
	if service.IsNotFound(err) {
		return page(c, fiber.StatusNotFound, "Invitation", "", team.Gone(service.ErrInvitationLink.Message))
	}
	if err != nil {
		return err
	}
	f := team.AcceptForm{Account: inv.TeamName(), Company: inv.Company != "", Email: inv.Email, Role: inv.Role, Action: "/invitations/" + url.PathEscape(token), CSRF: csrf(c)}
	return page(c, fiber.StatusOK, "Join "+inv.TeamName(), "", team.Accept(f))
}

// acceptInvitation makes the member and logs it in.
func (w *Web) acceptInvitation(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	inv, err := w.svc.Team.Invitation(c.UserContext(), token)
	if service.IsNotFound(err) {
		return page(c, fiber.StatusNotFound, "Invitation", "", team.Gone(service.ErrInvitationLink.Message))
	}
	if err != nil {
		return err
	}
	in := service.AcceptInput{Name: formValue(c, "name"), Password: formValue(c, "password")}
	m, err := w.svc.Team.Accept(c.UserContext(), token, in)
	switch {
	case isValidation(err):
		f := team.AcceptForm{Account: inv.TeamName(), Company: inv.Company != "", Email: inv.Email, Role: inv.Role, Name: in.Name, Action: "/invitations/" + url.PathEscape(token),
			Errors: fieldErrors(err), CSRF: csrf(c)}
		return page(c, fiber.StatusUnprocessableEntity, "Join "+inv.TeamName(), "", team.Accept(f))
	case service.ErrorCode(err) == service.CodeConflict, service.IsNotFound(err):
		_, msg := describe(statusOf(err), err)
		if service.IsNotFound(err) {
			msg = service.ErrInvitationLink.Message
		}
		return page(c, statusOf(err), "Invitation", "", team.Gone(msg))
	case err != nil:
		return err
	}
	s, err := w.startSession(c, service.Who{AccountID: m.UserID, MemberID: m.ID})
	if err != nil {
		return err
	}
	s.remember(m.Email)
	welcome := "Welcome to " + inv.AccountName + "'s team, as " + service.Role(m.Role).Label() + "."
	if inv.Company != "" {
		welcome = "Welcome to " + inv.Company + ", as " + service.Role(m.Role).Label() + "."
	}
	w.flash(c, views.FlashSuccess, welcome)
	return c.Redirect("/dashboard", fiber.StatusSeeOther)
}
