package web

import (
	"context"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"herald/models"
	"herald/service"
	"herald/views"
	"herald/views/contacts"
	"herald/views/segments"
)

// typeFilter reads the contact type a list is narrowed to (0: every
// type); anything but an id reads as every type.
func typeFilter(c *fiber.Ctx) int64 {
	id, err := strconv.ParseInt(strings.TrimSpace(c.FormValue("type")), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}

// contactsPage reads the page q of the account's contacts of type
// (0: all), with the total for the pager.
func (w *Web) contactsPage(c *fiber.Ctx, q views.ListQuery, typeID int64) (contacts.List, error) {
	acct := accountID(c)
	l := contacts.List{TypeID: typeID, CSRF: csrf(c)}
	rows, pager, err := readPage(c.UserContext(), q, contacts.ListURL, func(ctx context.Context, f service.ListFilter, fn func(*models.ContactView) error) error {
		return w.svc.Contacts.Each(ctx, acct, service.ContactFilter{ListFilter: f, ContactTypeID: typeID}, fn)
	})
	if err != nil {
		return l, err
	}
	pager.Extra = l.Filter()
	if pager.HasNext || pager.HasPrev() {
		if pager.Total, err = w.svc.Contacts.Count(c.UserContext(), acct, service.ContactFilter{ListFilter: service.ListFilter{Search: pager.Query.Search}, ContactTypeID: typeID}); err != nil {
			return l, err
		}
	}
	l.Rows, l.Query, l.Pager = rows, pager.Query, pager
	if len(rows) > 0 {
		if l.Levels, err = w.svc.Contacts.Levels(c.UserContext(), acct, rows); err != nil {
			return l, err
		}
		if l.TagNames, err = w.svc.Contacts.TagNames(c.UserContext(), acct); err != nil {
			return l, err
		}
	}
	return l, nil
}

func (w *Web) listContacts(c *fiber.Ctx) error {
	l, err := w.contactsPage(c, listQuery(c), typeFilter(c))
	if err != nil {
		return err
	}
	if partial(c) {
		return render(c, fiber.StatusOK, contacts.ListView(l, false))
	}
	types, err := w.svc.ContactTypes.All(c.UserContext(), accountID(c))
	if err != nil {
		return err
	}
	return page(c, fiber.StatusOK, "Contacts", views.NavContacts, contacts.ListPage(contacts.Page{List: l, Types: types}))
}

// contactsBack is the address of the list the request came from.
func contactsBack(c *fiber.Ctx) string {
	q := listQuery(c)
	p := views.Pager{Base: contacts.ListURL, Query: q, Extra: contacts.List{TypeID: typeFilter(c)}.Filter()}
	return p.URL(q.Page)
}

// contactsChanged answers a deletion: to htmx the list as it now is and
// a flash message, to a browser a redirect back to the list.
func (w *Web) contactsChanged(c *fiber.Ctx, message string) error {
	if !partial(c) {
		w.flash(c, views.FlashSuccess, message)
		return c.Redirect(contactsBack(c), fiber.StatusSeeOther)
	}
	l, err := w.contactsPage(c, listQuery(c), typeFilter(c))
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, contacts.ListView(l, false), flashOOB(views.FlashSuccess, message))
}

func (w *Web) deleteContact(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	if err := w.svc.Contacts.Delete(c.UserContext(), accountID(c), id); err != nil {
		return err
	}
	return w.contactsChanged(c, "Contact deleted.")
}

// bulkDeleteContacts deletes the selected contacts, all or none.
func (w *Web) bulkDeleteContacts(c *fiber.Ctx) error {
	ids, err := parseSelection(c)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return w.refuse(c, contactsBack(c), "Select at least one contact first.")
	}
	if err := w.svc.Contacts.BulkDelete(c.UserContext(), accountID(c), ids); err != nil {
		return err
	}
	return w.contactsChanged(c, deletedMessage(len(ids), "flash.deleted_contacts"))
}

// --- The contact form

// contactForm fills the choices of a form (types, countries, the states
// and cities of its country and state) and its custom fields, keeping
// the values in values (by field name).
func (w *Web) contactForm(c *fiber.Ctx, f contacts.Form, values map[string]string) (contacts.Form, error) {
	ctx, acct := c.UserContext(), accountID(c)
	var err error
	if f.Types, err = w.svc.ContactTypes.All(ctx, acct); err != nil {
		return f, err
	}
	customs, err := w.svc.Fields.Custom(ctx, acct)
	if err != nil {
		return f, err
	}
	f.Custom = make([]contacts.CustomInput, 0, len(customs))
	for _, fld := range customs {
		f.Custom = append(f.Custom, contacts.CustomInput{Name: fld.FieldName, Label: service.FieldLabel(fld.FieldName), Type: fld.FieldType, Value: values[fld.FieldName]})
	}
	f.Countries = w.countryOptions()
	countryID := parseInt(f.Country)
	f.States = w.stateChoices(countryID, f.State)
	f.Cities = w.cityChoices(countryID, parseInt(f.State), f.City)
	f.CSRF = csrf(c)
	return f, nil
}

func parseInt(s string) int64 {
	n, _ := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return n
}

func (w *Web) countryOptions() []views.Option {
	cs := w.svc.Lookup.Countries()
	out := make([]views.Option, 0, len(cs))
	for _, ct := range cs {
		out = append(out, views.Option{Value: strconv.FormatInt(ct.ID, 10), Label: ct.Name})
	}
	return out
}

// stateChoices are the states of a country, selected the one whose id is
// selected. A selected value that is no state's id (a name stored before)
// is kept as a choice of its own, so saving the form does not lose it.
func (w *Web) stateChoices(countryID int64, selected string) views.Choices {
	ch := views.Choices{Selected: selected, Empty: "Choose a country first"}
	if countryID == 0 {
		return keepChoice(ch)
	}
	states := w.svc.Lookup.States(countryID)
	ch.Empty = "No state"
	if len(states) > 0 {
		ch.Empty = "Choose a state"
	}
	ch.Options = make([]views.Option, 0, len(states))
	for _, s := range states {
		ch.Options = append(ch.Options, views.Option{Value: strconv.FormatInt(s.ID, 10), Label: s.Name})
	}
	return keepChoice(ch)
}

// cityChoices are the cities of a state, or of a country that has no
// states (a country with states waits for one: it may have thousands).
func (w *Web) cityChoices(countryID, stateID int64, selected string) views.Choices {
	ch := views.Choices{Selected: selected, Empty: "Choose a country first"}
	if countryID == 0 {
		return keepChoice(ch)
	}
	if stateID == 0 || w.stateName(countryID, stateID) == "" {
		if len(w.svc.Lookup.States(countryID)) > 0 {
			ch.Empty = "Choose a state first"
			return keepChoice(ch)
		}
		stateID = 0
	}
	cities := w.svc.Lookup.Cities(countryID, stateID)
	ch.Empty = "Choose a city"
	ch.Options = make([]views.Option, 0, len(cities))
	for _, ci := range cities {
		ch.Options = append(ch.Options, views.Option{Value: strconv.FormatInt(ci.ID, 10), Label: ci.Name})
	}
	return keepChoice(ch)
}

// keepChoice adds the selected value as an option when none has it.
func keepChoice(ch views.Choices) views.Choices {
	if ch.Selected == "" {
		return ch
	}
	for _, o := range ch.Options {
		if o.Value == ch.Selected {
			return ch
		}
	}
	ch.Options = append([]views.Option{{Value: ch.Selected, Label: ch.Selected}}, ch.Options...)
	return ch
}

// stateName is the name of the country's state of that id, "" when the
// country has no such state.
func (w *Web) stateName(countryID, stateID int64) string {
	for _, st := range w.svc.Lookup.States(countryID) {
		if st.ID == stateID {
			return st.Name
		}
	}
	return ""
}

// placeNames turn the values of the state and city selects into what the
// contact stores: the names of the state and city of those ids within
// the country, or the values as they came (names kept from before).
func (w *Web) placeNames(countryID int64, state, city string) (string, string) {
	stateID, err := strconv.ParseInt(state, 10, 64)
	if err == nil && countryID > 0 {
		if name := w.stateName(countryID, stateID); name != "" {
			state = name
		} else {
			stateID = 0
		}
	}
	if cityID, err := strconv.ParseInt(city, 10, 64); err == nil && countryID > 0 {
		for _, ci := range w.svc.Lookup.Cities(countryID, max(stateID, 0)) {
			if ci.ID == cityID {
				city = ci.Name
				break
			}
		}
	}
	return state, city
}

// placeID finds the id of a stored state (city) name among the choices,
// so the select shows it; a name no choice has is kept as it is.
func placeID(ch views.Choices, name string) string {
	if name == "" {
		return ""
	}
	for _, o := range ch.Options {
		if strings.EqualFold(o.Label, name) {
			return o.Value
		}
	}
	return name
}

// contactInput reads the contact form: the state and city selects give
// ids, stored as names; custom fields come as custom_field[<name>].
func (w *Web) contactInput(c *fiber.Ctx) (service.ContactInput, contacts.Form, map[string]string, error) {
	f := contacts.Form{
		ContactTypeID: formValue(c, "contact_type_id"), FirstName: formValue(c, "first_name"), LastName: formValue(c, "last_name"),
		Email: formValue(c, "email"), AltEmail: formValue(c, "alt_email"), Country: formValue(c, "country"),
		State: formValue(c, "state"), City: formValue(c, "city"), AddressLine1: formValue(c, "address_line1"),
		AddressLine2: formValue(c, "address_line2"), StateProvinceRegion: formValue(c, "state_province_region"), PostalCode: formValue(c, "postal_code"),
	}
	state, city := w.placeNames(parseInt(f.Country), f.State, f.City)
	in := service.ContactInput{
		ContactTypeID: f.ContactTypeID, FirstName: f.FirstName, LastName: f.LastName, Email: f.Email, AltEmail: f.AltEmail,
		Country: f.Country, State: state, City: city,
		AddressLine1: f.AddressLine1, AddressLine2: f.AddressLine2, StateProvinceRegion: f.StateProvinceRegion, PostalCode: f.PostalCode,
	}
	customs, err := w.svc.Fields.Custom(c.UserContext(), accountID(c))
	if err != nil {
		return in, f, nil, err
	}
	values := make(map[string]string, len(customs))
	in.Custom = make(map[string]string, len(customs))
	for _, fld := range customs {
		v := formValue(c, "custom_field["+fld.FieldName+"]")
		values[fld.FieldName] = v
		in.Custom[fld.FieldName] = v
	}
	return in, f, values, nil
}

func (w *Web) newContact(c *fiber.Ctx) error {
	f := contacts.Form{ContactTypeID: strings.TrimSpace(formValue(c, "type"))}
	f, err := w.contactForm(c, f, nil)
	if err != nil {
		return err
	}
	if len(f.Types) == 1 && f.ContactTypeID == "" {
		f.ContactTypeID = strconv.FormatInt(f.Types[0].ID, 10)
	}
	return page(c, fiber.StatusOK, "Add a contact", views.NavContacts, contacts.FormPage(f))
}

// contactParam reads the route's contact and finds it. Errors: ErrNotFound.
func (w *Web) contactParam(c *fiber.Ctx) (*models.ContactView, error) {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return nil, err
	}
	return w.svc.Contacts.Get(c.UserContext(), accountID(c), id)
}

func (w *Web) editContact(c *fiber.Ctx) error {
	v, err := w.contactParam(c)
	if err != nil {
		return err
	}
	f := contacts.Form{
		ID: v.ID, ContactTypeID: strconv.FormatInt(v.ContactTypeID, 10), FirstName: v.FirstName, LastName: v.LastName,
		Email: v.Email, AddressLine1: v.AddressLine1, AddressLine2: v.AddressLine2,
		StateProvinceRegion: v.StateProvinceRegion, PostalCode: v.PostalCode,
	}
	if v.AltEmail != nil {
		f.AltEmail = *v.AltEmail
	}
	// The view answers the country's name; the select wants its id.
	var countryID int64
	if ct, ok := w.svc.Lookup.Country(v.Country); ok && v.Country != "" {
		countryID = ct.ID
		f.Country = strconv.FormatInt(ct.ID, 10)
	}
	f.State = placeID(w.stateChoices(countryID, ""), v.State)
	f.City = placeID(w.cityChoices(countryID, parseInt(f.State), ""), v.City)
	values := map[string]string{}
	for name, cv := range v.CustomField {
		if cv.FieldValue != nil {
			values[name] = *cv.FieldValue
		}
	}
	if f, err = w.contactForm(c, f, values); err != nil {
		return err
	}
	for i := range f.Custom {
		if f.Custom[i].Type == "datetime-local" {
			f.Custom[i].Value = strings.TrimSuffix(f.Custom[i].Value, ":00") // the input shows minutes unless seconds matter
		}
	}
	segs, err := w.svc.Segments.OfContact(c.UserContext(), accountID(c), v.ID)
	if err != nil {
		return err
	}
	f.Segments = []contacts.SegmentLink{}
	for _, s := range segs {
		f.Segments = append(f.Segments, contacts.SegmentLink{Name: s.Segment.SegmentName, URL: segments.SegmentURL(s.Segment.ID),
			WhyURL: segments.WhyContactURL(s.Segment.ID, v.ID), In: s.In, ByHand: s.ByHand})
	}
	if f.Tags, err = w.tagsCard(c, v.ID, v.Tags); err != nil {
		return err
	}
	f.Privacy = privacyOf(c, v) // web/privacy.go
	eng, err := w.svc.Contacts.Engagement(c.UserContext(), accountID(c), v.ID)
	if err != nil {
		return err
	}
	loc, _ := accountZone(c)
	f.Engagement = &contacts.Engagement{Level: eng.Level, LastEngaged: eng.LastEngaged, Loc: loc}
	return page(c, fiber.StatusOK, "Edit "+v.Email, views.NavContacts, contacts.FormPage(f))
}

func (w *Web) createContact(c *fiber.Ctx) error { return w.saveContact(c, 0) }

func (w *Web) updateContact(c *fiber.Ctx) error {
	id, err := service.ParseID(c.Params("id"))
	if err != nil {
		return err
	}
	return w.saveContact(c, id)
}

// saveContact creates (id 0) or updates a contact. A validation error
// answers the form with the messages beside each field (422); a success
// goes back to the list with a flash message (HX-Redirect for htmx).
func (w *Web) saveContact(c *fiber.Ctx, id int64) error {
	in, f, values, err := w.contactInput(c)
	if err != nil {
		return err
	}
	f.ID = id
	var v *models.ContactView
	if id == 0 {
		in.Consent = w.consoleConsent(c) // web/privacy.go
		v, err = w.svc.Contacts.Create(c.UserContext(), accountID(c), in)
	} else {
		in.ContactID = strconv.FormatInt(id, 10)
		v, err = w.svc.Contacts.Update(c.UserContext(), accountID(c), in)
	}
	if isValidation(err) {
		f.Errors = fieldErrors(err)
		for field, msgs := range f.Errors {
			if !contactField(field) {
				f.Other = append(f.Other, msgs...)
			}
		}
		if f, err = w.contactForm(c, f, values); err != nil {
			return err
		}
		if partial(c) {
			return render(c, fiber.StatusUnprocessableEntity, contacts.ContactForm(f))
		}
		title := "Add a contact"
		if id != 0 {
			title = "Edit contact"
		}
		return page(c, fiber.StatusUnprocessableEntity, title, views.NavContacts, contacts.FormPage(f))
	}
	if err != nil {
		return err
	}
	msg := "Contact " + v.Email + " added."
	if id != 0 {
		msg = "Contact " + v.Email + " saved."
	}
	w.flash(c, views.FlashSuccess, msg)
	back := contacts.ListOfType(v.ContactTypeID)
	if partial(c) {
		c.Set("HX-Redirect", back)
		return c.SendStatus(fiber.StatusNoContent)
	}
	return c.Redirect(back, fiber.StatusSeeOther)
}

// contactField reports whether a validation key is shown beside a
// control of the contact form.
func contactField(key string) bool {
	switch key {
	case "contact_type_id", "first_name", "last_name", "email", "alt_email", "country", "state", "city",
		"address_line1", "address_line2", "state_province_region", "postal_code":
		return true
	}
	return strings.HasPrefix(key, "custom_field.")
}

// states answers the options of the state select for the chosen country,
// and empties the city select (out of band); a country without states
// offers its cities at once.
func (w *Web) states(c *fiber.Ctx) error {
	countryID := parseInt(c.Query("country"))
	return render(c, fiber.StatusOK, views.StatesAnswer(w.stateChoices(countryID, ""), w.cityChoices(countryID, 0, ""), "contact-city"))
}

// cities answers the options of the city select for the chosen state.
func (w *Web) cities(c *fiber.Ctx) error {
	return render(c, fiber.StatusOK, views.ChoiceOptions(w.cityChoices(parseInt(c.Query("country")), parseInt(c.Query("state")), "")))
}
