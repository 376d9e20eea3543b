package api

import (
	"strconv"

	"herald/service"
)

// The organisation profile's and the saved blocks' part of the OpenAPI
// document (beyond the spec).

const (
	tProfile = "Organisation profile"
	tBlocks  = "Saved blocks"
)

var profileBody = obj{
	"company_name":  obj{"type": "string", "maxLength": 255, "description": "No line breaks; `((org_name))` in designs."},
	"address_line1": obj{"type": "string", "maxLength": 255, "description": "No line breaks."},
	"address_line2": obj{"type": "string", "maxLength": 255, "description": "No line breaks."},
	"city":          obj{"type": "string", "maxLength": 100, "description": "No line breaks."},
	"postal_code":   obj{"type": "string", "maxLength": 20, "description": "No line breaks."},
	"country_id":    integer("A country's id (`get/country-state-city`); empty for none."),
	"brand_color":   obj{"type": "string", "description": "`#rrggbb`, such as `#0f766e`; empty for none."},
	"logo":          obj{"type": "string", "format": "binary", "description": "Multipart only: a PNG or JPEG file of at most " + strconv.Itoa(service.MaxLogoBytes>>10) + " KB and " + strconv.Itoa(service.MaxLogoSide) + " pixels a side, re-encoded (nothing but its pixels is kept). Not given: the logo stays. As a text value it is refused (`The logo must be a file.`)."},
	"remove_logo":   flag("1: take the logo away (ignored when a new one comes)."),
}

var blockBody = obj{
	"name": obj{"type": "string", "maxLength": 100, "description": "Unique in the account whatever its case (`The name has already been taken.`); no line breaks."},
	"html": obj{"type": "string", "maxLength": 1 << 20, "description": "The block's markup (at most 1 MB: `The block may not be greater than 1 MB.`)."},
	"css":  obj{"type": "string", "maxLength": 1 << 20, "description": "The editor's style rules for the block (at most 1 MB)."},
}

func profileOps() []op {
	return []op{
		{method: "GET", path: "/org-profile", tag: tProfile, summary: "The organisation profile",
			desc: "Beyond the spec: the company name, postal address, brand colour and logo the account's mails (`((org_name))`, `((org_address))`, `((org_logo_url))`) and public pages show. An account that never saved one answers empty fields.",
			ok:   okRecord("OrgProfile")},
		{method: "POST", path: "/org-profile", tag: tProfile, summary: "Save the organisation profile",
			desc: "Beyond the spec. Replaces every text field (a field not given becomes empty, as on the console's form); the logo stays unless a new file or `remove_logo=1` comes. A key needs the `profile` area (or full access) to save it.",
			body: fields(nil, profileBody), ok: okText("Updated Successfully"), val: true},
		{method: "GET", path: "/blocks", tag: tBlocks, summary: "List the saved blocks",
			desc: "Beyond the spec: the editor's saved blocks, by name (an account keeps at most 200).",
			ok:   listOf("blocks", "SavedBlock")},
		{method: "POST", path: "/blocks", tag: tBlocks, summary: "Save a block",
			desc: "Beyond the spec. At most 200 blocks per account (`name`: `An account keeps at most 200 saved blocks: delete one first.`).",
			body: fields([]string{"name", "html"}, blockBody), ok: okRecord("SavedBlock"), val: true},
		{method: "DELETE", path: "/blocks/delete", tag: tBlocks, summary: "Delete a saved block",
			desc:  "The designs it was inserted into keep their copy.",
			query: []param{idQuery("id", "The block's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
	}
}

// okRecord is a success whose message is the named schema.
func okRecord(schema string) obj {
	return record("Success envelope.", obj{"status": constStr("success"), "message": ref(schema)})
}

func profileSchemas() obj {
	return obj{
		"OrgProfile": record("The organisation profile (beyond the spec).", obj{
			"company_name": str(""), "address_line1": str(""), "address_line2": str(""), "city": str(""), "postal_code": str(""),
			"country_id":  intOrNull("Null for none."),
			"brand_color": obj{"type": []string{"string", "null"}, "pattern": "^#[0-9a-f]{6}$", "description": "`#rrggbb` in lower case; null for none."},
			"logo_url":    obj{"type": []string{"string", "null"}, "format": "uri", "description": "The logo's absolute address (served by herald, cached for a year: a new logo has a new address); null for none."},
			"address":     str("The postal address on one line, as `((org_address))` fills it (\"1 Main St, 75001 Paris, France\")."),
			"updated_at":  timestampOrNull("Null before the first save."),
		}),
		"SavedBlock": record("A block saved from the editor (beyond the spec).", obj{
			"id": integer(""), "name": str(""), "html": str("The block's markup."), "css": str("The editor's style rules for it."),
			"created_at": timestamp(""), "updated_at": timestamp(""),
		}),
	}
}
