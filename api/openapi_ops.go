package api

import "herald/service"

const (
	nfUpper = "Record Not Found"
	nfLower = "Record not found"
)

func listOf(key, schema string) obj { return okObject(obj{key: arrayOf(ref(schema))}) }

func oneOf(key, schema string) obj { return okObject(obj{key: ref(schema)}) }

var okUtr = okObject(obj{"utr": obj{"type": "string", "format": "uuid"}})

func idQuery(name, desc string) param { return q(name, desc, obj{"type": "integer"}) }

func utrQuery(desc string) param { return q("utr", desc, obj{"type": "string"}) }

var (
	contactBody = obj{
		"contact_type_id": integer("From the contact type list."),
		"first_name":      str("No line breaks."), "last_name": str("No line breaks."),
		"email":     str("Unique within the contact type (case-insensitive)."),
		"alt_email": str("A valid address when given."),
		"country":   str("Country id, ISO 3166 alpha-2 or alpha-3 code, or name."),
		"state":     str(""), "city": str(""), "address_line1": str(""), "address_line2": str(""),
		"state_province_region": str(""), "postal_code": str(""),
		"custom_field": obj{"type": "object", "additionalProperties": obj{"type": "string"},
			"description": "Custom values by field name: `custom_field[<name>]` in a form, an object in JSON. On update, values not given stay; an empty value removes one."},
	}
	groupBody = obj{
		"group_name": str(""), "description": str(""),
		"is_display": obj{"type": []string{"integer", "boolean", "string"}, "description": "0 = not displayed, 1 = displayed (`true`/`false`, `on`/`off`, `yes`/`no` too)."},
	}
	senderBody = obj{
		"from_name": str(""), "from_email": str(""), "reply_to_email": str("Address that receives replies."),
		"country_id": integer("From the country/state/city list."), "state_id": integer(""), "city_id": integer(""),
		"zip_code": str(""), "company_address": obj{"type": "string", "maxLength": 255}, "company_address2": obj{"type": "string", "maxLength": 255},
		"nickname": str(""),
	}
	senderRequired = []string{"from_name", "from_email", "reply_to_email", "country_id", "company_address", "nickname"}
	singleSendBody = obj{
		"template_id":   integer("Id from the template list; 1 selects the custom template (then `template_html` is required)."),
		"template_json": str("Template code in JSON form; if given, `template_html` is empty."),
		"template_html": str("Template code in HTML form; if given, `template_json` is empty."),
		"sender_id":     integer("A verified sender of the account."), "unsubscribe_group_id": integer("Recipients of that group are avoided."),
		"single_send_name": obj{"type": "string", "maxLength": 255}, "subject": obj{"type": "string", "maxLength": 255},
		"preheader":                     obj{"type": "string", "maxLength": 255},
		"recipient_id":                  atMost(service.MaxBulkIDs, strings_("Items `contacts_<contact_type_id>` or `segments_<segment_id>` (`recipient_id[0]` … in a form).")),
		"exclude_specific_recipient_id": atMost(service.MaxBulkIDs, strings_("Same item form as `recipient_id`: recipients to avoid.")),
		"schedule_type":                 obj{"type": "integer", "enum": []int{0, 1}, "description": "0 = send immediately, 1 = scheduled."},
		"schedule_date":                 str("`Y-m-d`; required with schedule_type 1, in the future in the account's time zone."),
		"schedule_time":                 str("`H:i` or `H:i:s`; required with schedule_type 1."),
		"archive":                       obj{"type": "integer", "enum": []int{0, 1}, "description": "Beyond the spec (decisions.md 10): 1 shows the send, once sent, in the account's public archive. Create: 0 when not given; update: unchanged when not given."},
	}
	singleSendRequired = []string{"template_id", "sender_id", "unsubscribe_group_id", "single_send_name", "subject", "preheader", "recipient_id", "schedule_type"}
	segmentBody        = obj{
		"contact_type_id": integer("The contact type the segment belongs to (update keeps it when not given)."),
		"segment_name":    str(""),
		"select_field":    atMost(service.MaxConditions, strings_("`select_field[i]`: a field name (`email`, a reserved field, `created_at`, `tags`, `engagement`, a custom field). At most 50 conditions.")),
		"select_operator": atMost(service.MaxConditions, strings_("`select_operator[i]`: equals, not_equals, contains, not_contains, starts_with, ends_with, is_empty, is_not_empty, greater_than, less_than, in.")),
		"value":           atMost(service.MaxConditions, strings_("`value[i]`: the value (several separated by `|` for `in`, at most 1000).")),
		"query_type":      obj{"type": "string", "enum": []string{"and", "or", ""}, "description": "How conditions join (`and` when empty)."},
	}
	eventWebhookBody = obj{
		"url":     str("The endpoint (http or https)."),
		"events":  obj{"type": "array", "items": obj{"type": "string", "enum": service.EventNames}, "maxItems": service.MaxBulkIDs, "description": "`events[i]`: the kinds to receive."},
		"enabled": obj{"type": []string{"integer", "boolean", "string"}, "description": "1 (default) or 0."},
	}
)

// operations are every route of routes.go, in api.md's order, with the
// extras of decisions.md.
func operations() []op {
	const (
		tGlobal = "Global unsubscribers"
		tGroups = "Unsubscribe groups"
		tNotif  = "Notification recipients"
		tHooks  = "Event webhooks"
		tTypes  = "Contact types"
		tFields = "Fields"
		tCont   = "Contacts"
		tLookup = "Lookup"
		tSend   = "Senders"
		tTempl  = "Templates"
		tSeg    = "Segments"
		tSingle = "Single sends"
		tAuto   = "Automations"
	)
	emails := fields([]string{"email_address"}, obj{"email_address": str("Addresses separated by commas (semicolons, spaces and new lines too). If one is invalid, none is added.")})
	return append(append(formOps(), profileOps()...), []op{
		// Global unsubscribers.
		{method: "GET", path: "/global-unsubscribes", tag: tGlobal, summary: "List the global unsubscribers", list: true,
			ok: listOf("unSubscribers", "GlobalUnsubscriber")},
		{method: "POST", path: "/global-unsubscribes/save", tag: tGlobal, summary: "Add global unsubscribers", body: emails,
			ok: okText("Added Successfully"), val: true},
		{method: "DELETE", path: "/global-unsubscribes/delete", tag: tGlobal, summary: "Delete a global unsubscriber",
			query: []param{idQuery("id", "The unsubscriber's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
		{method: "POST", path: "/global-unsubscribes/bulk-delete", tag: tGlobal, summary: "Delete global unsubscribers", body: strIDsBody,
			ok: okText("Deleted Successfully"), nf: nfUpper, val: true},

		// Unsubscribe groups.
		{method: "GET", path: "/unsubscribes-groups", tag: tGroups, summary: "List the unsubscribe groups", list: true,
			ok: listOf("unsubscribesGroups", "UnsubscribeGroupInList")},
		{method: "POST", path: "/unsubscribes-groups/save", tag: tGroups, summary: "Create an unsubscribe group",
			body: fields([]string{"group_name", "description", "is_display"}, groupBody), ok: okText("Saved Successfully"), val: true},
		{method: "GET", path: "/unsubscribes-groups/details", tag: tGroups, summary: "Read an unsubscribe group",
			query: []param{idQuery("id", "The group's id.")}, ok: oneOf("unsubscribesGroup", "UnsubscribeGroup"), nf: nfUpper},
		{method: "POST", path: "/unsubscribes-groups/update", tag: tGroups, summary: "Update an unsubscribe group",
			query: []param{idQuery("id", "The group's id (may also come in the body).")},
			body:  fields([]string{"group_name", "description", "is_display"}, with(groupBody, obj{"id": integer("The group's id, when not in the query.")})),
			ok:    okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "POST", path: "/unsubscribes-groups/manually-add", tag: tGroups, summary: "Add recipients to an unsubscribe group",
			body: fields([]string{"unsubscribe_groups_id", "email_address"}, obj{
				"unsubscribe_groups_id": integer("The group's id."),
				"email_address":         str("Addresses separated by commas."),
			}), ok: okText("Added Successfully"), nf: nfUpper, val: true},
		{method: "GET", path: "/unsubscribes-groups/recipients-list", tag: tGroups, summary: "List a group's recipients", list: true,
			query: []param{idQuery("groupId", "The group's id.")}, ok: listOf("recipients", "GroupRecipient"), nf: nfUpper},
		{method: "DELETE", path: "/unsubscribes-groups/recipients-delete", tag: tGroups, summary: "Delete a group recipient",
			query: []param{idQuery("id", "The recipient's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
		{method: "POST", path: "/unsubscribes-groups/recipients-bulk-delete", tag: tGroups, summary: "Delete group recipients",
			body: strIDsBody, ok: okText("Deleted Successfully"), nf: nfUpper, val: true},

		// Notification recipients.
		{method: "GET", path: "/notification-recipients", tag: tNotif, summary: "List the notification recipients", list: true,
			ok: listOf("notifications", "NotificationRecipient")},
		{method: "POST", path: "/notification-recipient/save", tag: tNotif, summary: "Add a notification recipient",
			desc: "A missing `email_owner` answers `The name field is required` (no final period, as api.md documents). An address already on the list has its owner updated.",
			body: fields([]string{"email_address", "email_owner"}, obj{"email_address": str(""), "email_owner": str("Name of the address owner; no line breaks.")}),
			ok:   okText("Added Successfully"), val: true},
		{method: "DELETE", path: "/notification-recipient/delete", tag: tNotif, summary: "Delete a notification recipient",
			query: []param{idQuery("id", "The recipient's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
		{method: "POST", path: "/notification-recipient/bulk-delete", tag: tNotif, summary: "Delete notification recipients",
			body: strIDsBody, ok: okText("Deleted Successfully"), nf: nfUpper, val: true},

		// Event webhooks (decisions.md 7).
		{method: "GET", path: "/event-webhooks", tag: tHooks, summary: "List the events endpoints", list: true,
			desc: "Beyond the spec (decisions.md 7). The secret is never listed.",
			ok:   listOf("eventWebhooks", "EventWebhook")},
		{method: "POST", path: "/event-webhooks/save", tag: tHooks, summary: "Register an events endpoint",
			desc: "Beyond the spec (decisions.md 7). The answer holds the signing secret, shown this once. Herald POSTs JSON arrays of events signed with `Herald-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, \"<t>.\" + body)>` (docs/EVENTS.md).",
			body: fields([]string{"url"}, eventWebhookBody),
			ok: okObject(obj{
				"id": integer(""), "secret": str("Signs every delivery; shown only here."), "url": str(""),
				"events": obj{"type": "array", "items": obj{"type": "string", "enum": service.EventNames}}, "enabled": flag(""),
				"created_at": timestamp(""), "updated_at": timestamp(""),
			}), val: true},
		{method: "POST", path: "/event-webhooks/update", tag: tHooks, summary: "Change an events endpoint",
			desc: "Beyond the spec (decisions.md 7). Fields not given stay.",
			body: fields([]string{"id"}, with(eventWebhookBody, obj{"id": integer("The endpoint's id.")})),
			ok:   okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/event-webhooks/delete", tag: tHooks, summary: "Delete an events endpoint",
			query: []param{idQuery("id", "The endpoint's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},

		// Contact types.
		{method: "GET", path: "/contacts-type", tag: tTypes, summary: "List the contact types", list: true,
			ok: listOf("contactTypes", "ContactTypeInList")},
		{method: "POST", path: "/contacts-type/add", tag: tTypes, summary: "Create a contact type",
			body: fields([]string{"name"}, obj{"name": obj{"type": "string", "minLength": 2, "description": "Unique within the account (case-insensitive)."}}),
			ok:   okText("Added Successfully"), val: true},
		{method: "GET", path: "/contacts-type/view", tag: tTypes, summary: "Read a contact type",
			query: []param{idQuery("contact_type_id", "The contact type's id.")}, ok: oneOf("contactType", "ContactType"), nf: nfUpper},
		{method: "POST", path: "/contacts-type/update", tag: tTypes, summary: "Rename a contact type",
			body: fields([]string{"id", "name"}, obj{"id": integer("The contact type's id."), "name": obj{"type": "string", "minLength": 2}}),
			ok:   okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/contacts-type/delete", tag: tTypes, summary: "Delete a contact type (its contacts and segments too)",
			query: []param{idQuery("contact_type_id", "The contact type's id.")}, ok: okInErrors("Deleted Successfully"), nf: nfUpper},

		// Fields.
		{method: "GET", path: "/reserve-fields", tag: tFields, summary: "List the reserved fields",
			ok: okObject(obj{"reservedFields": arrayOf(ref("Field"))})},
		{method: "GET", path: "/custom-fields", tag: tFields, summary: "List the account's custom fields",
			ok: okObject(obj{"customFields": arrayOf(ref("Field"))})},
		{method: "POST", path: "/custom-fields/save", tag: tFields, summary: "Create a custom field",
			body: fields([]string{"field_name", "field_type"}, obj{
				"field_name": obj{"type": "string", "pattern": "^[A-Za-z0-9_]+$", "description": "Letters, digits and underscore; reserved names refused."},
				"field_type": obj{"type": "string", "enum": service.FieldTypes},
			}), ok: okText("Added Successfully"), val: true},
		{method: "DELETE", path: "/custom-fields/delete", tag: tFields, summary: "Delete a custom field (and its values)",
			query: []param{idQuery("id", "The field's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},

		// Contacts.
		{method: "GET", path: "/contacts/list", tag: tCont, summary: "List the contacts", list: true,
			query: []param{idQuery("contact_type_id", "Beyond the spec: list one contact type.")},
			ok:    listOf("contacts", "ContactInList")},
		{method: "POST", path: "/contacts/add", tag: tCont, summary: "Add a contact",
			body: fields([]string{"contact_type_id", "email", "country"}, contactBody), ok: okText("Contact Added Successfully"), nf: nfUpper, val: true},
		{method: "GET", path: "/contacts/details", tag: tCont, summary: "Read a contact",
			query: []param{idQuery("contact_id", "The contact's id.")}, ok: oneOf("contact", "Contact"), nf: nfUpper},
		{method: "GET", path: "/contacts/csv-sample/download", tag: tCont, summary: "Download a sample CSV",
			desc: "The header (the reserved fields, then the account's custom fields) and one example row; it imports cleanly.", okCSV: true},
		{method: "POST", path: "/contacts/upload-csv", tag: tCont, summary: "Import contacts from a CSV file",
			desc: "The file is imported as it arrives (streamed, batched); the answer comes when it is done, with the import's report beside the spec's message. " +
				"`contact_type_id` may also come in the query string. Header row required with an `email` column; other columns name reserved or custom fields; a `tags` column adds tags separated by `;` to each contact.",
			query: []param{idQuery("contact_type_id", "The contact type (may also be a form part before the file).")},
			body: &body{multipart: true, required: []string{"contact_type_id", "file"}, props: obj{
				"contact_type_id": integer(""), "file": obj{"type": "string", "contentMediaType": "text/csv", "description": "Only the csv extension."},
			}},
			ok: record("Success envelope with the import's report.", obj{
				"status": constStr("success"), "message": constStr("Imported Successfully"), "import": ref("Import"),
			}), nf: nfUpper, val: true},
		{method: "POST", path: "/contacts/update", tag: tCont, summary: "Update a contact",
			body: fields([]string{"contact_id", "contact_type_id", "email", "country"}, with(contactBody, obj{"contact_id": integer("The contact's id.")})),
			ok:   okText("Contact Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/contacts/delete", tag: tCont, summary: "Delete a contact",
			query: []param{idQuery("contact_id", "The contact's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},
		{method: "POST", path: "/contacts/bulk-delete", tag: tCont, summary: "Delete contacts",
			body: strIDsBody, ok: okText("Deleted Successfully"), nf: nfUpper, val: true},
		{method: "GET", path: "/contacts/export", tag: tCont, summary: "Export contacts as CSV",
			desc: "Beyond the spec (decisions.md 9). Streams the contacts of one contact type, or the recipients of one segment, as CSV: " +
				"header `email,first_name,last_name,alt_email,country,state,city,address_line1,address_line2,state_province_region,postal_code`, the account's custom fields by name, then how each contact came: " +
				"`status,consent_source,consent_id,consent_basis,consent_at,consent_ip,consent_confirmed_at` (empty on a segment's hand-added address). " +
				"A cell starting with `=`, `+`, `-` or `@` is prefixed with `'` so that spreadsheets do not run it. Give exactly one of the two ids.",
			query: []param{
				idQuery("contact_type_id", "Export this contact type's contacts."),
				idQuery("segment_id", "Export this segment's recipients."),
			}, okCSV: true, nf: nfUpper, val: true},
		{method: "POST", path: "/contacts/tags/add", tag: tCont, summary: "Add tags to contacts",
			desc: tagsDesc, body: tagsBody, ok: okText("Tags Added Successfully"), nf: nfUpper, val: true},
		{method: "POST", path: "/contacts/tags/remove", tag: tCont, summary: "Remove tags from contacts",
			desc: tagsDesc + " Tags a contact does not carry are passed over.", body: tagsBody, ok: okText("Tags Removed Successfully"), nf: nfUpper, val: true},

		// Privacy requests.
		{method: "GET", path: "/contacts/privacy-export", tag: tCont, summary: "Export what herald holds on an address",
			desc: "Beyond the spec (decisions.md 10). Streams one JSON object: `email`, `erased`, `contacts` (with fields and consent, deleted ones too), " +
				"`mails` (sends and automation emails, newest first, each with its outcome and timeline of opens, clicks, reports and unsubscribe), " +
				"`automation_enrolments`, `reports`, `unsubscribes`, `suppressions`. Written to the audit log.",
			query: []param{qReq("email", "The address.", str(""))},
			ok: record("The privacy export.", obj{
				"email": str("The address, normalised."), "erased": obj{"type": "boolean"},
				"contacts": obj{"type": "array", "items": ref("Contact")}, "mails": obj{"type": "array", "items": obj{"type": "object"}},
				"automation_enrolments": obj{"type": "array", "items": obj{"type": "object"}}, "reports": obj{"type": "array", "items": obj{"type": "object"}},
				"unsubscribes": obj{"type": "array", "items": obj{"type": "object"}}, "suppressions": obj{"type": "array", "items": obj{"type": "object"}},
			}), val: true},
		{method: "POST", path: "/contacts/erase", tag: tCont, summary: "Erase an address",
			desc: "Beyond the spec (decisions.md 10). The address's contacts are deleted and every other row of its history keeps only a keyed hash of it; " +
				"contacts/add then answers 422 `" + "The email was erased at the person's request." + "` and imports skip it, until the person signs up again through a form. Written to the audit log.",
			body: fields([]string{"email"}, obj{"email": str("The address to erase.")}), ok: okText(msgErased), val: true},

		// Lookup.
		{method: "GET", path: "/get/country-state-city", tag: tLookup, summary: "List countries, states and cities",
			desc: "The whole answer (about 11 MB) is streamed; `country_id` and `state_id` narrow it.",
			query: []param{
				idQuery("country_id", "Beyond the spec: states and cities of this country."),
				idQuery("state_id", "Beyond the spec: cities of this state."),
			},
			ok: okObject(obj{"countries": arrayOf(ref("Country")), "states": arrayOf(ref("State")), "cities": arrayOf(ref("City"))})},

		// Senders.
		{method: "GET", path: "/senders", tag: tSend, summary: "List the senders", list: true, ok: listOf("senders", "Sender")},
		{method: "POST", path: "/senders", tag: tSend, summary: "List the senders (POST, as api.md documents it)", list: true, ok: listOf("senders", "Sender")},
		{method: "POST", path: "/sender/save", tag: tSend, summary: "Create a sender and mail its verification link",
			desc: "Stored only once the verification mail was handed to the transport (503 otherwise). Verification mails are limited (429 with `Retry-After`).",
			body: fields(senderRequired, senderBody), ok: okText("Added Successfully"), val: true},
		{method: "GET", path: "/sender/details", tag: tSend, summary: "Read a sender",
			query: []param{idQuery("sender_id", "The sender's id.")}, ok: oneOf("sender", "Sender"), nf: nfUpper},
		{method: "POST", path: "/sender/update", tag: tSend, summary: "Update a sender",
			body: fields(append([]string{"sender_id"}, senderRequired...), with(senderBody, obj{"sender_id": integer("The sender's id.")})),
			ok:   okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/sender/delete", tag: tSend, summary: "Delete a sender",
			query: []param{idQuery("sender_id", "The sender's id.")}, ok: okInErrors("Deleted Successfully"), nf: nfUpper},
		{method: "GET", path: "/sender/resend-mail", tag: tSend, summary: "Mail the verification link again",
			query: []param{idQuery("sender_id", "The sender's id.")}, ok: okText("Verification Mail Send"), nf: nfUpper},

		{method: "GET", path: "/senders/warmup", tag: tSend, summary: "List the warm-up plans of sending domains",
			desc: "Beyond the spec (decisions.md 11): each plan with today's cap, use and what is left.",
			ok:   okObject(obj{"warmups": arrayOf(ref("WarmupPlan"))})},
		{method: "POST", path: "/senders/warmup", tag: tSend, summary: "Start a warm-up plan for a sending domain",
			desc: "Beyond the spec (decisions.md 11). Day N's cap is round(start × growth^(N-1)), capped at `until`; day 1 is today in the account's time zone. " +
				"Campaign mail of the domain over the day's cap waits in the ledger for the next day; single messages count against the cap but are never held. " +
				"A plan the domain already has is replaced (day 1 is today again).",
			body: fields([]string{"domain", "start", "growth", "until"}, obj{
				"domain": str("The domain of one of the account's senders."),
				"start":  obj{"type": "integer", "minimum": 1, "description": "Messages on day 1."},
				"growth": obj{"type": "number", "exclusiveMinimum": 1, "maximum": 10, "description": "Factor per day, e.g. 1.5."},
				"until":  integer("The daily volume at which the plan ends; greater than `start`."),
			}), ok: okText("Saved Successfully"), val: true},
		{method: "DELETE", path: "/senders/warmup", tag: tSend, summary: "End a sending domain's warm-up plan",
			desc:  "Beyond the spec (decisions.md 11): the domain's waiting mail goes at once.",
			query: []param{q("domain", "The plan's domain.", obj{"type": "string"})}, ok: okText("Deleted Successfully"), nf: textNoWarmup},

		// Templates and dynamic content.
		{method: "GET", path: "/get-dynamic/content", tag: tTempl, summary: "List the placeholders usable as ((name))",
			ok: okObject(obj{"contents": strings_("The reserved fields, the account's custom fields, then sender_name, sender_address, unsubscribe_preferences.")})},
		{method: "GET", path: "/get-design/template", tag: tTempl, summary: "List the design library",
			ok: okObject(obj{"templates": arrayOf(ref("DesignTemplate"))})},

		// Segments.
		{method: "GET", path: "/segment/list", tag: tSeg, summary: "List the segments", list: true, ok: listOf("segments", "Segment")},
		{method: "POST", path: "/segment/store", tag: tSeg, summary: "Create a segment",
			desc: "Beyond the spec (decisions.md 4). Condition errors are keyed by position (`select_field.0`, `value.2`).",
			body: fields([]string{"contact_type_id", "segment_name"}, segmentBody), ok: okText("Saved Successfully"), nf: nfUpper, val: true},
		{method: "POST", path: "/segment/update", tag: tSeg, summary: "Change a segment",
			desc: "Beyond the spec (decisions.md 4).",
			body: fields([]string{"segment_id", "segment_name"}, with(segmentBody, obj{"segment_id": integer("The segment's id.")})),
			ok:   okText("Updated Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/segment/delete", tag: tSeg, summary: "Delete a segment",
			query: []param{idQuery("segment_id", "The segment's id.")}, ok: okInErrors("Deleted Successfully"), nf: nfUpper},
		{method: "GET", path: "/segment/email/list", tag: tSeg, summary: "List a segment's recipients", list: true,
			query: []param{idQuery("segment_id", "The segment's id.")}, ok: listOf("contactEmails", "SegmentRecipient"), nf: nfLower},
		{method: "POST", path: "/segment/email/store", tag: tSeg, summary: "Add an address to a segment by hand",
			body: fields([]string{"segment_id", "first_name", "last_name", "email"}, obj{
				"segment_id": integer("From the segment list."), "first_name": str(""), "last_name": str(""), "email": str(""),
			}), ok: okText("Added Successfully"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/segment/email/delete", tag: tSeg, summary: "Remove a segment recipient",
			query: []param{idQuery("segment_recipient_id", "The recipient's id.")}, ok: okText("Deleted Successfully"), nf: nfUpper},

		// Single sends.
		{method: "GET", path: "/single-send/list", tag: tSingle, summary: "List the single sends", list: true, ok: listOf("singleSends", "SingleSend")},
		{method: "POST", path: "/single/send/create", tag: tSingle, summary: "Create (and trigger) a single send",
			body: fields(singleSendRequired, singleSendBody), ok: okUtr, nf: nfUpper, val: true},
		{method: "POST", path: "/single/send/duplicate", tag: tSingle, summary: "Duplicate a single send",
			desc:  "Makes `Copy of <name>` in status 0; it sends nothing until it is updated. The utr may come in the query or the body.",
			query: []param{utrQuery("The send's utr.")}, body: fields(nil, obj{"utr": str("The send's utr, when not in the query.")}),
			ok: okText("Duplicated Successfully"), nf: nfLower},
		{method: "GET", path: "/single/send/duplicate", tag: tSingle, summary: "Duplicate a single send (GET, as api.md describes it)",
			query: []param{utrQuery("The send's utr.")}, ok: okText("Duplicated Successfully"), nf: nfLower},
		{method: "GET", path: "/single-send/details", tag: tSingle, summary: "Read a single send (as an array of one)",
			query: []param{utrQuery("The send's utr.")}, ok: okObject(obj{"singleSend": obj{"type": "array", "items": ref("SingleSend"), "minItems": 1, "maxItems": 1}}), nf: nfLower},
		{method: "GET", path: "/single-send/report", tag: tSingle, summary: "Who opened and clicked a send, where and on what",
			desc: "Beyond the spec: people's first opens and clicks by mail client (`gmail`, `apple_mail`, `outlook`, `yahoo`, `thunderbird`, `other`), device (`desktop`, `mobile`, `tablet`, `unknown`) " +
				"and country (ISO 3166-1 alpha-2, `\"\"` unknown; all unknown when `countries_known` is false: no IP-to-country database on the server), most opened first. " +
				"Machines (privacy proxies, link scanners) apart: their counted opens and clicks by the service their agent names. " +
				"`opened_within_hours[h]`, `clicked_within_hours[h]`: messages first opened (clicked) by a person within h+1 hours of their delivery; 337 entries, the last holding every later one. " +
				"Counted from the version that keeps them on (earlier opens and clicks are in no class).",
			query: []param{utrQuery("The send's utr.")}, ok: okObject(obj{"report": ref("SendReport")}), nf: nfLower},
		{method: "POST", path: "/single/send/update", tag: tSingle, summary: "Update (and trigger) a single send",
			desc: "A running or completed send cannot be updated (422).",
			body: fields(append([]string{"utr"}, singleSendRequired...), with(singleSendBody, obj{"utr": str("The send's utr.")})),
			ok:   okUtr, nf: nfUpper, val: true},
		{method: "DELETE", path: "/single/send/delete", tag: tSingle, summary: "Delete a single send (a running one stops)",
			query: []param{utrQuery("The send's utr.")}, ok: okText("Deleted Successfully"), nf: nfLower},
		{method: "POST", path: "/single/send/bulk-delete", tag: tSingle, summary: "Delete single sends (utrs or ids)",
			body: strIDsBody, ok: okText("Deleted Successfully"), nf: nfLower, val: true},
		{method: "POST", path: "/single/send/resend", tag: tSingle, summary: "Resend a completed single send to those who did not open",
			desc: "Beyond the spec (API-NOTES.md, \"Resend to those who did not open\"). Schedules a new single send with the same design and a new subject, " +
				"`wait_days` (1 to 14) after the send went out, or at `schedule_date` and `schedule_time` in the account's time zone, to the recipients " +
				"it was delivered to that no person opened or clicked by then (machine opens do not count), less those who unsubscribed, bounced or " +
				"complained since. At most one per send; a send not completed, a resend, or a send that has one is refused (422). Answers the resend's utr.",
			body: fields([]string{"utr", "subject"}, obj{
				"utr": str("The completed send's utr."), "subject": str("The resend's subject."),
				"wait_days": integer("Days after the send went out, 1 to 14."), "schedule_date": str("Instead of wait_days: Y-m-d."),
				"schedule_time": str("With schedule_date: H:i or H:i:s."),
			}), ok: okUtr, nf: nfUpper, val: true},
		{method: "GET", path: "/archive", tag: tSingle, summary: "The address of the account's public archive",
			desc: "Beyond the spec (decisions.md 10): the absolute address of the page listing the account's sends marked `archive` that were sent, newest first; its Atom feed is at the same address followed by `/feed.xml`. The archive's public id is made the first time it is asked for.",
			ok:   okObject(obj{"url": obj{"type": "string", "format": "uri"}})},
		{method: "POST", path: "/mail/send", tag: tSingle, summary: "Send one message at once (a single message)",
			desc: "Beyond the spec (decisions.md 11): one message to one address, sent at once ahead of campaign traffic, tracked like the others (opens, clicks, VERP return path, the events webhook) but without List-Unsubscribe: it is not marketing, so unsubscribes do not apply. " +
				"A hard-bounce or complaint suppression of the address refuses it: 422 with `errors` = `The address is suppressed.`. " +
				"The answer's `id` is the message's Message-ID (without brackets) and the `message_id` of its events, which carry no `single_send_utr`. " +
				"The same `idempotency_key` within 24 hours answers the same id and sends nothing more.",
			body: fields([]string{"sender_id", "to", "subject"}, obj{
				"sender_id":       integer("A verified sender of the account."),
				"to":              str("The recipient's address."),
				"subject":         obj{"type": "string", "maxLength": 255, "description": "No line breaks; `((key))` placeholders are filled from `data`."},
				"template_id":     integer("One of the account's own designs (the console's Designs); another account's is not found. Required when `template_html` is not given."),
				"template_html":   obj{"type": "string", "maxLength": 5 << 20, "description": "The message's HTML, with `((key))` placeholders; required when `template_id` is not given (it wins over the design's HTML when both are given)."},
				"data":            obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "Values of the `((key))` placeholders (`data[<key>]` in a form); at most 100 keys and 64 KB. Unknown placeholders become empty."},
				"idempotency_key": obj{"type": "string", "maxLength": 255, "description": "Repeated within 24 hours, answers the first call's id and sends nothing more (per account, shared by every process)."},
			}), ok: okObject(obj{"id": str("The message's Message-ID without brackets; its events' `message_id`.")}), val: true},

		// Automations.
		{method: "GET", path: "/automations", tag: tAuto, summary: "List the automations", list: true,
			desc: "An account without automations gets NF, as api.md's errors table says of this listing.",
			ok:   listOf("automations", "AutomationInList"), nf: nfUpper},
		{method: "POST", path: "/automations/create", tag: tAuto, summary: "Create an automation (no emails)",
			body: fields([]string{"type", "unsubscribe_group_id"}, obj{
				"type":                 obj{"type": "string", "enum": []string{"welcome", "custom"}},
				"automation_for":       str("`contacts_<contact_type_id>` or `segments_<segment_id>`; optional at creation."),
				"automation_name":      obj{"type": "string", "maxLength": 255},
				"unsubscribe_group_id": integer("0 = none chosen yet."),
				"exit_criteria":        obj{"type": "integer", "enum": []int{0, 1, 2}, "description": "Beyond the spec (decisions.md 6)."},
				"trigger":              obj{"type": "string", "enum": []string{"target", "api", "date"}, "description": "Beyond the spec: `target` (default) enrols the contacts entering `automation_for`; `api` enrols only the contacts named by `automations/trigger`; `date` enrols, once a day in the account's time zone, the contacts whose `date_field` moved by `date_offset_days` is that day. With `api` and `date`, `automation_for` must be a contact type."},
				"date_field":           str("Beyond the spec, required with `trigger` `date`: the name of a custom field of type `datetime-local` (values `YYYY-MM-DDTHH:MM[:SS]` or `YYYY-MM-DD`; the time of day is ignored)."),
				"date_offset_days":     obj{"type": "integer", "minimum": -365, "maximum": 365, "description": "Beyond the spec, with `trigger` `date`: days before (negative) or after (positive) the date; 0 (default) on the day."},
				"date_yearly":          obj{"type": "string", "enum": []string{"0", "1", "true", "false"}, "description": "Beyond the spec, with `trigger` `date`: `1`/`true` every year on the date's anniversary (a 29 February on 28 February in other years); `0`/`false` (default) once, on the date."},
			}), ok: okUtr, nf: nfUpper, val: true},
		{method: "GET", path: "/automations/duplicate", tag: tAuto, summary: "Duplicate an automation with its emails (as a draft)",
			query: []param{utrQuery("The automation's utr.")}, ok: okUtr, nf: nfUpper},
		{method: "GET", path: "/automations/details", tag: tAuto, summary: "Read an automation",
			query: []param{utrQuery("The automation's utr.")}, ok: oneOf("automation", "Automation"), nf: nfUpper},
		{method: "GET", path: "/automations/pause", tag: tAuto, summary: "Pause a live automation",
			query: []param{utrQuery("The automation's utr.")}, ok: okText("Automation Paused Successfully"), nf: nfLower, val: true},
		{method: "GET", path: "/automations/set-live", tag: tAuto, summary: "Set an automation live",
			desc:  "Refused (422, a string) without an unsubscribe group (`An unsubscribe group is required to make an automation live.`), without a target, without emails, or with an email whose sender is not verified.",
			query: []param{utrQuery("The automation's utr.")}, ok: okText("Automation has been set live"), nf: nfUpper, val: true},
		{method: "DELETE", path: "/automations/delete", tag: tAuto, summary: "Delete an automation",
			query: []param{utrQuery("The automation's utr.")}, ok: okText("Deleted Successfully"), nf: nfLower},
		{method: "POST", path: "/automations/bulk-delete", tag: tAuto, summary: "Delete automations (utrs or ids)",
			body: strIDsBody, ok: okText("Deleted Successfully"), nf: nfLower, val: true},
		{method: "GET", path: "/automations/schedule", tag: tAuto, summary: "List an automation's emails",
			query: []param{utrQuery("The automation's utr.")}, ok: okObject(obj{"automation_schedules": arrayOf(ref("AutomationSchedule"))}), nf: nfLower},
		{method: "POST", path: "/automations/schedule/create", tag: tAuto, summary: "Add an email to an automation",
			body: fields([]string{"utr", "sender_id", "subject", "waiting_period", "waiting_type", "template_id", "preview_img"}, obj{
				"utr": str("The automation to add to."), "sender_id": integer("From the sender list."), "subject": str(""),
				"waiting_period": obj{"type": "integer", "minimum": 0, "maximum": 3650, "description": "Days or hours to wait; stored as sent, and no wait for `instantly` whatever its value (1 by the spec's convention)."},
				"waiting_type":   obj{"type": "string", "enum": []string{"instantly", "days", "hours"}},
				"template_id":    integer(""), "preview_img": str("A file name of the library's thumbnails."),
				"template_json": str(""), "template_html": str(""),
			}), ok: okUtr, nf: nfLower, val: true},
		{method: "POST", path: "/automations/trigger", tag: tAuto, summary: "Enrol one contact in an automation started from the API",
			desc: "Beyond the spec: the automation (`trigger` `api`) must be live (else 422, `errors` = `The automation is not live.`; " +
				"an automation that starts from its target answers `The automation does not start from the API.`), and `email` a contact of its contact type " +
				"(else 422 with `errors.email`). A contact is enrolled once per automation: a repeated call answers `Contact already enrolled` and keeps the first call's data. " +
				"The first email goes after its waiting period, as for any enrolment.",
			body: fields([]string{"automation", "email"}, obj{
				"automation": str("The automation's utr."),
				"email":      str("The contact's address (case-insensitive)."),
				"data":       obj{"type": "object", "additionalProperties": obj{"type": "string"}, "description": "Values of the `((data.<key>))` placeholders of this automation's emails to this contact (`data[<key>]` in a form); at most 100 keys and 64 KB. Unknown ones become empty."},
			}), ok: okTexts("Contact enrolled", "Contact already enrolled"), nf: nfLower, val: true},

		// This document.
		{method: "GET", path: "/openapi.json", tag: "Document", summary: "This OpenAPI 3.1 document", public: true,
			desc: "Served without keys (decisions.md 9).",
			ok:   obj{"type": "object", "description": "An OpenAPI 3.1 document.", "required": []string{"openapi", "paths"}}},
	}...)
}
