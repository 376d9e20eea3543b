package api

import "herald/service"

// schemas are the records of api.md's "Resources and their fields", with
// the extra fields decisions.md and docs/API-NOTES.md add.
func schemas() obj {
	unsubscriber := obj{
		"id": integer(""), "user_id": integer("The owner."),
		"unsubscribe_groups_id": intOrNull("Null for a global unsubscriber."),
		"email_address":         str(""),
		"created_at":            timestamp(""), "updated_at": timestamp(""),
	}
	group := obj{
		"id": integer(""), "user_id": integer(""), "rand_id": str("16 random hexadecimal characters."),
		"group_name": str(""), "description": str(""),
		"is_display": flag("1 = shown on the unsubscribe preferences page."),
		"created_at": timestamp(""), "updated_at": timestamp(""),
	}
	contactType := obj{
		"id": integer(""), "user_id": integer(""), "name": str(""),
		"deleted_at": timestampOrNull(""), "created_at": timestamp(""), "updated_at": timestamp(""),
	}
	contact := obj{
		"id": integer(""), "user_id": integer(""), "contact_type_id": integer(""),
		"first_name": str(""), "last_name": str(""), "email": str(""), "alt_email": strOrNull(""),
		"country": str("The country's name (or the stored text when it names no country)."),
		"state":   str(""), "city": str(""), "address_line1": str(""), "address_line2": str(""),
		"state_province_region": str(""), "postal_code": str(""),
		"status":   str("`confirmed`, or `unconfirmed` for a double-opt-in sign-up not yet confirmed."),
		"consent":  ref("Consent"),
		"language": str("IETF tag the public pages and the confirmation mail speak to the contact; empty when unknown."),
		"custom_field": obj{
			"type":                 []string{"object", "null"},
			"description":          "One key per custom field of the account (null when the account has none).",
			"additionalProperties": ref("CustomValue"),
		},
		"deleted_at": timestampOrNull(""), "created_at": timestamp(""), "updated_at": timestamp(""),
		"fullname": str("First and last name joined by a space."),
		"tags":     atMost(service.MaxTagsPerContact, strings_("The contact's tags (decisions.md 10), sorted; stored trimmed and lower-cased.")),
	}
	segment := obj{
		"id": integer(""), "user_id": integer(""), "contact_type_id": integer(""), "segment_name": str(""),
		"select_field":    strings_("Field names of the conditions (`email`, a reserved field, `created_at`, `tags`, `engagement`, a custom field). `tags` takes `contains` and `not_contains` (the contact carries the tag, or not); `engagement` (the contact's level: `engaged`, `lapsing`, `not_engaged`, `new`) takes `equals`, `not_equals` and `in`."),
		"select_operator": strings_("Operators of the conditions: equals, not_equals, contains, not_contains, starts_with, ends_with, is_empty, is_not_empty, greater_than, less_than, in."),
		"value":           strings_("Values of the conditions (`in` takes several separated by `|`)."),
		"query_type":      obj{"type": []string{"string", "null"}, "enum": []any{"and", "or", nil}, "description": "How conditions join: `and` (also when null) or `or`."},
		"deleted_at":      timestampOrNull(""), "created_at": timestamp(""), "updated_at": timestamp(""),
		"segment_emails_count": integer("Recipients: matching contacts and addresses added by hand."),
	}
	target := record("A recipient target.", obj{
		"id":    str("The contact type's or segment's id, as text."),
		"table": obj{"type": "string", "enum": []string{"contacts_", "segments_"}, "description": "The target kind."},
	})
	singleSend := obj{
		"id": integer(""), "user_id": integer(""), "template_id": integer("Design template id (1 = custom)."),
		"recipient_id":                  arrayOf(ref("Target")),
		"exclude_specific_recipient_id": arrayOf(ref("Target")),
		"sender_id":                     integer(""), "unsubscribe_group_id": integer("Group whose recipients are avoided."),
		"single_send_name": str(""), "from_sender": str("Sending address."), "reply_to": str(""),
		"sender_name": strOrNull(""), "sender_address": strOrNull("The sender's postal address on one line."),
		"subject": str(""), "preheader": str(""),
		"schedule_type": obj{"type": "integer", "enum": []int{0, 1}, "description": "0 = trigger immediately, 1 = at schedule_date and schedule_time."},
		"schedule_date": str("`YYYY-MM-DD` (`0000-00-00` for an immediate send)."),
		"schedule_time": str("`HH:MM:SS` (`00:00:00` for an immediate send)."),
		"status":        obj{"type": "integer", "enum": []int{0, 1, 2, 3}, "description": "0 initiate, 1 ready to send, 2 running, 3 completed."},
		"utr":           obj{"type": "string", "format": "uuid"},
		"template_json": strOrNull(""), "template_html": strOrNull(""),
		"triggered": integer("Messages queued after exclusions."), "delivered": integer("Accepted by the relay (or stored in the outbox)."),
		"unique_opens": integer(""), "total_opens": integer(""),
		"unique_clicks": integer("Beyond the spec."), "total_clicks": integer("Beyond the spec."),
		"bounces": integer("Hard bounces."), "unsubscribes": integer(""),
		"blocks":       integer("Beyond the spec (decisions.md 8): messages the relay refused by policy."),
		"soft_bounces": integer("Beyond the spec (decisions.md 7)."),
		"spam_reports": integer("Beyond the spec (decisions.md 7)."),
		"archive":      obj{"type": "integer", "enum": []int{0, 1}, "description": "Beyond the spec (decisions.md 10): 1 shows the send, once sent, in the account's public archive."},
		"waiting":      integer("Beyond the spec (decisions.md 11): of a running send whose From domain follows a warm-up plan, the queued messages beyond what is left of today's cap (they go on a later day); 0 otherwise."),
		"unique_open_token": obj{"type": "object", "additionalProperties": obj{"type": "string"},
			"description": "Always `{}` in herald (API-NOTES)."},
		"sent_at":    datetimeOrNull("When the first message was accepted; null before."),
		"created_at": timestamp(""), "updated_at": timestamp(""),
	}
	automation := obj{
		"id": integer(""), "user_id": integer(""),
		"automation_for":       integer("Contact type id or segment id targeted (0 when none yet)."),
		"automation_for_table": obj{"type": "string", "description": "Kind of target: `contacts_`, `segments_` (empty when none yet)."},
		"automation_name":      str(""),
		"exit_criteria":        obj{"type": "integer", "enum": []int{0, 1, 2}, "description": "0 leave after the last email; 1 also on leaving the target; 2 also on opening or clicking."},
		"unsubscribe_group_id": str("Numeric text; `0` = none chosen yet."),
		"automation_type":      obj{"type": "integer", "enum": []int{0, 1}, "description": "0 welcome, 1 custom."},
		"utr":                  obj{"type": "string", "format": "uuid"},
		"status":               obj{"type": "integer", "enum": []int{0, 1}, "description": "0 draft, 1 live."},
		"live_at":              datetimeOrNull(""),
		"total_triggered":      integer(""), "total_delivered": integer(""), "total_unique_opens": integer(""),
		"total_opens": integer(""), "total_bounces": integer(""), "total_unsubscribe": integer(""),
		"total_soft_bounces": integer("Beyond the spec (decisions.md 7)."),
		"total_spam_reports": integer("Beyond the spec (decisions.md 7)."),
		"trigger_kind":       obj{"type": "string", "enum": []string{"target", "api", "date"}, "description": "Beyond the spec: `target` enrols the contacts entering `automation_for`, `api` those named by `automations/trigger`, `date` those whose date field (moved by the offset) is today."},
		"date_field":         str("Beyond the spec: the custom field a `date` automation reads (empty otherwise)."),
		"date_offset_days":   integer("Beyond the spec: days before (negative) or after (positive) the date; 0 on the day."),
		"date_yearly":        obj{"type": "integer", "enum": []int{0, 1}, "description": "Beyond the spec: 1 every year, 0 once."},
		"deleted_at":         timestampOrNull(""), "created_at": timestamp(""), "updated_at": timestamp(""),
	}
	sender := obj{
		"id": integer(""), "user_id": integer(""), "from_name": str(""), "from_email": str(""), "reply_to_email": str(""),
		"country_id": integer(""), "state_id": integer(""), "city_id": integer(""), "zip_code": str(""),
		"company_address": str(""), "company_address2": str(""), "nickname": str(""),
		"is_verified": flag("1 once the verification link was followed."),
		"utr":         str("12 characters of a-z0-9."),
		"send_at":     datetimeOrNull("When the verification mail was last sent."),
		"created_at":  timestamp(""), "updated_at": timestamp(""), "deleted_at": timestampOrNull(""),
	}
	eventKinds := obj{"type": "array", "items": obj{"type": "string", "enum": service.EventNames}}
	return withSchemas(withSchemas(formSchemas(), profileSchemas()), obj{
		"Failure": obj{
			"type": "object", "description": "Failure envelope.", "additionalProperties": false,
			"required": []string{"status", "errors"},
			"properties": obj{
				"status": constStr("failed"),
				"errors": obj{"oneOf": []obj{
					{"type": "string"},
					{"type": "object", "additionalProperties": arrayOf(obj{"type": "string"}), "description": "One list of messages per field."},
				}},
			},
		},
		"Unauthorized": obj{
			"type": "object", "description": "Failure envelope of the key check.", "additionalProperties": false,
			"required": []string{"status", "errors"},
			"properties": obj{
				"status": constStr("failed"),
				"errors": obj{"oneOf": []obj{
					constStr("Invalid PublicKey or SecretKey."),
					constStr(textKeyScope), // a named key outside its scope
					constStr("Too Many Requests"),
					{"type": "object", "additionalProperties": false, "minProperties": 1, "properties": obj{
						"PublicKey": obj{"type": "array", "items": constStr("The public key field is required.")},
						"SecretKey": obj{"type": "array", "items": constStr("The secret key field is required.")},
					}},
				}},
			},
		},
		"GlobalUnsubscriber":     record("A global unsubscriber (api.md).", unsubscriber),
		"GroupRecipient":         record("A recipient of an unsubscribe group.", with(unsubscriber, obj{"unsubscribe_groups_id": integer("")})),
		"UnsubscribeGroup":       record("An unsubscribe group.", group),
		"UnsubscribeGroupInList": record("An unsubscribe group as the list answers it.", with(group, obj{"unsubscribe_clients_count": integer("How many recipients the group has.")})),
		"NotificationRecipient": record("An address that receives notifications.", obj{
			"id": integer(""), "user_id": integer(""), "email_address": str(""), "email_owner": str("Name of the address owner."),
			"created_at": timestamp(""), "updated_at": timestamp(""),
		}),
		"EventWebhook": record("An events endpoint (decisions.md 7).", obj{
			"id": integer(""), "user_id": integer(""), "url": str(""), "events": eventKinds,
			"enabled":       flag(""),
			"failing_since": timestampOrNull("When deliveries to it started failing; null while they succeed."),
			"created_at":    timestamp(""), "updated_at": timestamp(""),
		}),
		"ContactType":       record("A contact type.", contactType),
		"ContactTypeInList": record("A contact type as the list answers it.", with(contactType, obj{"contacts_count": integer("")})),
		"CustomValue": record("A custom field of a contact.", obj{
			"field_name": str("The field's display label (`join_date` → `Join Date`)."), "field_value": strOrNull(""),
		}),
		"Consent": record("How a contact came; {} for contacts from before it was kept.", obj{
			"source":       str("`form`, `api`, `import` or `console`."),
			"form_id":      integer("The form of a sign-up."),
			"import_id":    integer("The import that brought the contact."),
			"basis":        str("What the importer said of the list."),
			"at":           timestamp("When the contact came."),
			"ip":           str("The address the sign-up came from."),
			"user_agent":   str("The browser of the sign-up."),
			"text":         str("The form's wording the person agreed to."),
			"confirmed_at": timestamp("When the person confirmed a double-opt-in sign-up."),
		}, "source", "form_id", "import_id", "basis", "at", "ip", "user_agent", "text", "confirmed_at"),
		"Contact":       record("A contact.", contact),
		"ContactInList": record("A contact as the list answers it, with its contact type.", with(contact, obj{"contact_type": ref("ContactType")})),
		"Segment":       record("A segment as the list answers it.", segment),
		"SegmentRecipient": record("A recipient of a segment (a matching contact, or an address added by hand).", obj{
			"id": integer(""), "user_id": integer(""), "segment_id": integer(""), "contact_id": intOrNull("Null for an address added by hand."),
			"first_name": str(""), "last_name": str(""), "email": str(""),
			"country": strOrNull(""), "state": strOrNull(""), "city": strOrNull(""), "address_line1": strOrNull(""),
			"created_at": timestamp(""), "updated_at": timestamp(""), "fullname": str(""),
		}),
		"Field": record("A reserved or custom field.", obj{
			"id": integer(""), "user_id": intOrNull("Null for reserved fields."), "field_name": str(""),
			"field_type":  obj{"type": "string", "enum": service.FieldTypes},
			"is_reserved": flag(""),
			"created_at":  timestampOrNull("Null for reserved fields."), "updated_at": timestampOrNull("Null for reserved fields."),
		}),
		"DesignTemplate": record("A design of the library.", obj{
			"id": integer(""), "template_name": str(""), "preview_image": str("File name under /static/img/templates/."),
			"json_code": str(""), "html_code": str(""), "is_blank": flag(""),
			"created_at": timestampOrNull(""), "updated_at": timestampOrNull(""),
		}),
		"Target":           target,
		"SingleSend":       record("A single send.", singleSend),
		"Automation":       record("An automation.", automation),
		"AutomationInList": record("An automation as the list answers it.", with(automation, obj{"automation_schedule_count": integer("Emails in the automation.")})),
		"AutomationSchedule": record("An email of an automation.", obj{
			"id": integer(""), "user_id": integer(""), "automation_id": integer(""), "sender_id": integer(""),
			"subject": str(""), "waiting_period": integer(""),
			"waiting_type": obj{"type": "string", "enum": []string{"instantly", "days", "hours"}},
			"utr":          obj{"type": "string", "format": "uuid"}, "template_id": integer(""), "preview_img": str(""),
			"template_json": str("Empty when unused."), "template_html": str("Empty when unused."),
			"created_at": timestamp(""), "updated_at": timestamp(""),
			"design_url": str("The console's editor page of the email."), "image": str("Address of the preview image."),
		}),
		"Sender": record("A sender (from identity).", sender),
		"WarmupPlan": record("A warm-up plan of a sending domain (beyond the spec, decisions.md 11).", obj{
			"domain": str("The From domain."), "start": integer("The cap of day 1."),
			"growth":     obj{"type": "number", "description": "Each day's cap is the previous one's times this."},
			"until":      integer("The daily volume at which the plan ends."),
			"started_on": str("Day 1, `YYYY-MM-DD` in the account's time zone."), "ends_on": str("The last capped day."),
			"days": integer("How many days the plan caps."), "day": integer("Today's number in the plan."),
			"done":      obj{"type": "boolean", "description": "The last day is over: the domain has no cap."},
			"today_cap": integer("0 once done."), "today_sent": integer("Messages of the domain handed to relays today under the plan."),
			"today_left": integer("What is left of today's cap."),
		}),
		"SendClass": record("Opens and clicks of one mail client, device or country.", obj{
			"key":     str("The class: a mail client's family, a device, or an ISO 3166-1 alpha-2 code (empty: unknown)."),
			"opened":  integer("People: messages first opened in the class. Machines: their counted opens."),
			"clicked": integer("People: messages first clicked in the class. Machines: their counted clicks."),
		}),
		"SendReport": record("Who opened and clicked a send, where and on what (beyond the spec).", obj{
			"utr": str("The send's utr."), "clients": arrayOf(ref("SendClass")), "devices": arrayOf(ref("SendClass")),
			"countries":       arrayOf(ref("SendClass")),
			"countries_known": obj{"type": "boolean", "description": "An IP-to-country database names countries on this server."},
			"machines":        arrayOf(ref("SendClass")), "machine_opens": integer(""), "machine_clicks": integer(""),
			"opened_within_hours":  atMost(337, arrayOf(obj{"type": "integer"})),
			"clicked_within_hours": atMost(337, arrayOf(obj{"type": "integer"})),
		}),
		"Country": record("", obj{"id": integer("ISO 3166-1 numeric."), "name": str(""), "iso2": str(""), "iso3": str("")}),
		"State":   record("", obj{"id": integer(""), "country_id": integer(""), "code": str(""), "name": str("")}),
		"City":    record("", obj{"id": integer(""), "country_id": integer(""), "state_id": integer("0 when in no state."), "name": str("")}),
		"Import": record("The report of a CSV import (beyond the spec).", obj{
			"id": integer(""), "user_id": integer(""), "contact_type_id": integer(""), "file_name": str(""),
			"status":      obj{"type": "string", "enum": []string{"running", "done", "failed"}},
			"bytes_total": integer(""), "bytes_read": integer(""), "rows": integer(""),
			"created": integer(""), "updated": integer(""), "skipped": integer("Rows with an error (all of them)."),
			"rejected":   arrayOf(record("", obj{"line": integer(""), "reason": str("")})),
			"message":    str("Why the import failed."),
			"created_at": timestamp(""), "updated_at": timestamp(""), "finished_at": timestampOrNull(""),
		}, "message"),
	})
}

// withSchemas adds more's schemas to base (a part's own file keeps its own).
func withSchemas(more, base obj) obj {
	for k, v := range more {
		base[k] = v
	}
	return base
}
