package api

import (
	"github.com/gofiber/fiber/v2"

	"herald/service"
)

// The organisation profile (beyond the spec): the company name, postal
// address, brand colour and logo the account's mails and public pages
// show, as on the console's account page.

// profileAnswer is the profile as GET org-profile answers it: text fields
// as stored ("" when empty), country_id, brand_color and logo_url null when
// unset, address the postal address on one line.
func profileAnswer(v service.ProfileView) fiber.Map {
	p := v.Profile
	m := fiber.Map{
		"company_name": p.CompanyName, "address_line1": p.AddressLine1, "address_line2": p.AddressLine2,
		"city": p.City, "postal_code": p.PostalCode, "address": v.Address,
		"country_id": nil, "brand_color": nil, "logo_url": nil, "updated_at": p.UpdatedAt,
	}
	if p.CountryID != 0 {
		m["country_id"] = p.CountryID
	}
	if p.BrandColor != "" {
		m["brand_color"] = p.BrandColor
	}
	if v.LogoURL != "" {
		m["logo_url"] = v.LogoURL
	}
	return m
}

func (a *API) orgProfile(c *fiber.Ctx) error {
	v, err := a.svc.Profiles.View(c.UserContext(), account(c))
	if err != nil {
		return fail(c, err)
	}
	return success(c, profileAnswer(v))
}

// saveOrgProfile replaces the profile's text fields with the body's (a
// field not given becomes empty, as on the console's form). The logo comes
// only as a multipart file part `logo` (at most MaxLogoBytes are read: the
// service refuses a larger one by its size); without one the logo stays,
// unless remove_logo is 1.
func (a *API) saveOrgProfile(c *fiber.Ctx) error {
	f, err := parseForm(c)
	if err != nil {
		return fail(c, err)
	}
	in := service.ProfileInput{
		CompanyName: f.Get("company_name"), AddressLine1: f.Get("address_line1"), AddressLine2: f.Get("address_line2"),
		City: f.Get("city"), PostalCode: f.Get("postal_code"), CountryID: f.Get("country_id"), BrandColor: f.Get("brand_color"),
		RemoveLogo: f.Get("remove_logo") == "1", LogoNotFile: f.Has("logo"),
	}
	if fh, ferr := c.FormFile("logo"); ferr == nil {
		if in.Logo, err = service.ReadLogo(fh); err != nil {
			return fail(c, err)
		}
	}
	if _, err := a.svc.Profiles.Save(c.UserContext(), account(c), in); err != nil {
		return fail(c, err)
	}
	return success(c, "Updated Successfully")
}
