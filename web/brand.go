package web

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/service"
	"herald/views"
	"herald/views/account"
)

// The organisation profile: its form on the account page, and the two
// public files pages show of it (the logo, the brand colour's stylesheet).
// Both files are named by their content (the logo by a hash of its bytes,
// the stylesheet by its colour), so they are cached for a year: a new logo
// or colour has a new address.

// mountBrand registers the profile's public files, before the console's
// middleware: recipients have no session.
func (w *Web) mountBrand(app *fiber.App) {
	app.Get("/brand/logo/:name", w.brandLogo)
	app.Get("/brand/color/:name", brandStyle)
}

// immutable are the headers of a file whose address changes with its content.
func immutable(c *fiber.Ctx, contentType string) {
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderContentType, contentType)
}

// brandLogo serves a logo as herald re-encoded it, with its own type
// (the name's extension must agree with it).
func (w *Web) brandLogo(c *fiber.Ctx) error {
	name := c.Params("name")
	hash, ext, ok := strings.Cut(name, ".")
	if !ok {
		return fiber.ErrNotFound
	}
	data, ct, err := w.svc.Profiles.Logo(c.UserContext(), strings.Clone(hash))
	if err != nil {
		if service.IsNotFound(err) {
			return fiber.ErrNotFound
		}
		return err
	}
	if (ct == "image/png" && ext != "png") || (ct == "image/jpeg" && ext != "jpg") {
		return fiber.ErrNotFound
	}
	immutable(c, ct)
	c.Set(fiber.HeaderContentSecurityPolicy, "default-src 'none'")
	return c.Send(data)
}

// brandStyle is the stylesheet of a brand colour ("0f766e.css"): the
// colour and the text colour that contrasts with it, as the custom
// properties app.css's .org-* rules read. Only a valid colour makes one,
// so nothing else reaches the stylesheet.
func brandStyle(c *fiber.Ctx) error {
	hex, ok := strings.CutSuffix(c.Params("name"), ".css")
	if !ok {
		return fiber.ErrNotFound
	}
	color, ok := service.ParseColor("#" + hex)
	if !ok || color != "#"+hex {
		return fiber.ErrNotFound
	}
	immutable(c, "text/css; charset=utf-8")
	return c.SendString(":root{--org:" + color + ";--org-ink:" + service.InkOn(color) + "}\n")
}

// profileForm is the account page's profile card showing what is saved.
func (w *Web) profileForm(c *fiber.Ctx) (account.ProfileForm, error) {
	p, err := w.svc.Profiles.Get(c.UserContext(), accountID(c))
	if err != nil {
		return account.ProfileForm{}, err
	}
	b, err := w.svc.Profiles.Brand(c.UserContext(), accountID(c))
	if err != nil {
		return account.ProfileForm{}, err
	}
	return account.ProfileFormOf(p, b, w.countryOptions(), csrf(c)), nil
}

// saveProfile saves the organisation profile from the account page's
// multipart form; a logo file comes in "logo" (at most MaxLogoBytes: the
// service says so of a larger one). Errors of the form are shown in it
// (422); a save goes back to the account page.
func (w *Web) saveProfile(c *fiber.Ctx) error {
	in := service.ProfileInput{
		CompanyName: formValue(c, "company_name"), AddressLine1: formValue(c, "address_line1"),
		AddressLine2: formValue(c, "address_line2"), City: formValue(c, "city"), PostalCode: formValue(c, "postal_code"),
		CountryID: formValue(c, "country_id"), BrandColor: formValue(c, "brand_color"),
		RemoveLogo: formValue(c, "remove_logo") == "1",
	}
	if fh, err := c.FormFile("logo"); err == nil && fh.Filename != "" {
		logo, err := service.ReadLogo(fh)
		if err != nil {
			return err
		}
		in.Logo = logo
	}
	_, err := w.svc.Profiles.Save(c.UserContext(), accountID(c), in)
	if isValidation(err) {
		d, derr := w.accountData(c)
		if derr != nil {
			return derr
		}
		d.Profile.CompanyName, d.Profile.AddressLine1, d.Profile.AddressLine2 = in.CompanyName, in.AddressLine1, in.AddressLine2
		d.Profile.City, d.Profile.PostalCode, d.Profile.CountryID, d.Profile.BrandColor = in.City, in.PostalCode, in.CountryID, in.BrandColor
		d.Profile.Errors = fieldErrors(err)
		return page(c, fiber.StatusUnprocessableEntity, "Account", views.NavAccount, account.Page(d))
	}
	if err != nil {
		return err
	}
	w.flash(c, views.FlashSuccess, "The organisation profile is saved.")
	return c.Redirect("/account#org-profile", fiber.StatusSeeOther)
}
