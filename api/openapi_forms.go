package api

import (
	"herald/models"
	"herald/service"
)

// The sign-up forms' part of the OpenAPI document (decisions.md 10).

const tForms = "Forms"

var formBody = obj{
	"name":            obj{"type": "string", "maxLength": 255, "description": "No line breaks."},
	"contact_type_id": integer("The contact type sign-ups join."),
	"double_opt_in":   flag("1 (the default): a new address gets a confirmation mail and stays `unconfirmed` until it follows the link; 0: confirmed at once."),
	"fields":          atMost(service.MaxFormFields, strings_("Custom field names shown on the form (`fields[]` repeated, or `fields[0]` …).")),
	"group_ids":       atMost(service.MaxFormGroups, obj{"type": "array", "items": obj{"type": "integer"}, "description": "Unsubscribe groups the person may choose: chosen ones are left (the person gets their mail), the others offered are joined."}),
	"redirect_url":    obj{"type": "string", "maxLength": 2048, "description": "An http(s) address the hosted form sends the person to after signing up; empty: herald's own page."},
	"language":        obj{"type": "string", "maxLength": 35, "description": "IETF language tag of the public pages and the confirmation mail (`de`, `pt-BR`); empty: the person's browser language."},
	"confirm_subject": obj{"type": "string", "maxLength": 255, "description": "Extra field: the confirmation mail's subject, sent as written (not translated); no line breaks. Empty: herald's subject in the person's language."},
	"confirm_body":    obj{"type": "string", "maxLength": service.MaxConfirmBody, "description": "Extra field: the confirmation mail's text, sent as written (not translated): plain text (escaped; a blank line starts a paragraph) that must contain `" + models.ConfirmURLPlaceholder + "`, replaced by the confirmation link. Empty: herald's mail in the person's language."},
}

func formOps() []op {
	return []op{
		{method: "GET", path: "/forms", tag: tForms, summary: "List the sign-up forms", list: true,
			desc: "Beyond the spec (decisions.md 10).", ok: listOf("forms", "Form")},
		{method: "POST", path: "/forms/save", tag: tForms, summary: "Create a sign-up form",
			desc: "Beyond the spec (decisions.md 10). The hosted page is `/f/<public_id>`; it also takes posts from the embeddable snippet (`POST /f/<public_id>`, form-encoded).",
			body: fields([]string{"name", "contact_type_id"}, formBody),
			ok:   okObject(obj{"id": integer(""), "public_id": str("Names the form in its public address.")}), nf: nfUpper, val: true},
		{method: "POST", path: "/forms/update", tag: tForms, summary: "Change a sign-up form",
			desc:  "Beyond the spec (decisions.md 10). Replaces every setting (the public id stays); lists not given become empty.",
			query: []param{idQuery("id", "The form's id (may also come in the body).")},
			body:  fields([]string{"name", "contact_type_id"}, with(formBody, obj{"id": integer("The form's id, when not in the query.")})),
			ok:    okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/forms/delete", tag: tForms, summary: "Delete a sign-up form",
			desc:  "Its pending confirmation links stop working; its contacts stay.",
			query: []param{idQuery("id", "The form's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
	}
}

func formSchemas() obj {
	return obj{
		"Form": record("A sign-up form (decisions.md 10).", obj{
			"id": integer(""), "user_id": integer(""), "public_id": str(""), "name": str(""),
			"contact_type_id": integer(""), "double_opt_in": flag(""),
			"fields": arrayOf(obj{"type": "string"}), "group_ids": arrayOf(obj{"type": "integer"}),
			"redirect_url": str(""), "language": str(""), "confirm_subject": str("\"\": herald's subject."), "confirm_body": str("\"\": herald's mail."),
			"created_at": timestamp(""), "updated_at": timestamp(""),
		}),
	}
}
