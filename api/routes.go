package api

import "github.com/gofiber/fiber/v2"

// Mount registers every API route on r (the /api group). All routes of
// the API are listed here.
func (a *API) Mount(r fiber.Router) {
	// The OpenAPI document (decisions.md 9) is public: mounted before the
	// key check, which every route below goes through.
	r.Get("/openapi.json", serveOpenAPI)

	r.Use(a.auth, checkUTF8)

	// Global unsubscribers.
	r.Get("/global-unsubscribes", a.listGlobalUnsubscribes)
	r.Post("/global-unsubscribes/save", a.saveGlobalUnsubscribes)
	r.Delete("/global-unsubscribes/delete", a.deleteGlobalUnsubscribe)
	r.Post("/global-unsubscribes/bulk-delete", a.bulkDeleteGlobalUnsubscribes)

	// Unsubscribe groups and their recipients.
	r.Get("/unsubscribes-groups", a.listGroups)
	r.Post("/unsubscribes-groups/save", a.saveGroup)
	r.Get("/unsubscribes-groups/details", a.groupDetails)
	r.Post("/unsubscribes-groups/update", a.updateGroup)
	r.Post("/unsubscribes-groups/manually-add", a.addGroupRecipients)
	r.Get("/unsubscribes-groups/recipients-list", a.listGroupRecipients)
	r.Delete("/unsubscribes-groups/recipients-delete", a.deleteGroupRecipient)
	r.Post("/unsubscribes-groups/recipients-bulk-delete", a.bulkDeleteGroupRecipients)

	// Notification recipients.
	r.Get("/notification-recipients", a.listNotificationRecipients)
	r.Post("/notification-recipient/save", a.saveNotificationRecipient)
	r.Delete("/notification-recipient/delete", a.deleteNotificationRecipient)
	r.Post("/notification-recipient/bulk-delete", a.bulkDeleteNotificationRecipients)

	// Events webhook endpoints (decisions.md 7).
	r.Get("/event-webhooks", a.listEventWebhooks)
	r.Post("/event-webhooks/save", a.saveEventWebhook)
	r.Post("/event-webhooks/update", a.updateEventWebhook)
	r.Delete("/event-webhooks/delete", a.deleteEventWebhook)

	// Contact types.
	r.Get("/contacts-type", a.listContactTypes)
	r.Post("/contacts-type/add", a.addContactType)
	r.Get("/contacts-type/view", a.viewContactType)
	r.Post("/contacts-type/update", a.updateContactType)
	r.Delete("/contacts-type/delete", a.deleteContactType)

	// Fields.
	r.Get("/reserve-fields", a.reservedFields)
	r.Get("/custom-fields", a.customFields)
	r.Post("/custom-fields/save", a.saveCustomField)
	r.Delete("/custom-fields/delete", a.deleteCustomField)

	// Contacts.
	r.Get("/contacts/list", a.listContacts)
	r.Post("/contacts/add", a.addContact)
	r.Get("/contacts/details", a.contactDetails)
	r.Get("/contacts/csv-sample/download", a.csvSample)
	r.Post("/contacts/upload-csv", a.uploadCSV)
	r.Post("/contacts/update", a.updateContact)
	r.Delete("/contacts/delete", a.deleteContact)
	r.Post("/contacts/bulk-delete", a.bulkDeleteContacts)
	r.Get("/contacts/export", a.exportContacts) // decisions.md 9
	r.Post("/contacts/tags/add", a.addTags)     // decisions.md 10
	r.Post("/contacts/tags/remove", a.removeTags)

	// Privacy requests (decisions.md 10).
	r.Get("/contacts/privacy-export", a.privacyExport)
	r.Post("/contacts/erase", a.eraseContact)

	// Lookup.
	r.Get("/get/country-state-city", a.countryStateCity)

	// Senders (the list answers GET and POST: decisions.md section 2).
	r.Get("/senders", a.listSenders)
	r.Post("/senders", a.listSenders)
	r.Post("/sender/save", a.saveSender)
	r.Get("/sender/details", a.senderDetails)
	r.Post("/sender/update", a.updateSender)
	r.Delete("/sender/delete", a.deleteSender)
	r.Get("/sender/resend-mail", a.resendSenderMail)
	// Warm-up plans of sending domains (decisions.md 11).
	r.Get("/senders/warmup", a.listWarmups)
	r.Post("/senders/warmup", a.startWarmup)
	r.Delete("/senders/warmup", a.endWarmup)

	// Templates and dynamic content.
	r.Get("/get-dynamic/content", a.dynamicContent)
	r.Get("/get-design/template", a.designTemplates)

	// Segments.
	r.Get("/segment/list", a.listSegments)
	r.Post("/segment/store", a.storeSegment)
	r.Post("/segment/update", a.updateSegment)
	r.Delete("/segment/delete", a.deleteSegment)
	r.Get("/segment/email/list", a.listSegmentEmails)
	r.Post("/segment/email/store", a.storeSegmentEmail)
	r.Delete("/segment/email/delete", a.deleteSegmentEmail)

	// Single sends (duplicate answers POST and GET: decisions.md section 2).
	r.Get("/single-send/list", a.listSingleSends)
	r.Post("/single/send/create", a.createSingleSend)
	r.Post("/single/send/duplicate", a.duplicateSingleSend)
	r.Get("/single/send/duplicate", a.duplicateSingleSend)
	r.Get("/single-send/details", a.singleSendDetails)
	r.Get("/single-send/report", a.singleSendReport) // beyond the spec: clients, devices, countries, hours
	r.Post("/single/send/update", a.updateSingleSend)
	r.Delete("/single/send/delete", a.deleteSingleSend)
	r.Post("/single/send/bulk-delete", a.bulkDeleteSingleSends)
	r.Post("/single/send/resend", a.resendSingleSend) // beyond the spec: API-NOTES.md, "Resend to those who did not open"

	// Single messages, sent ahead of campaigns (decisions.md 11).
	r.Post("/mail/send", a.sendMessage)

	// The public archive of sends (decisions.md 10).
	r.Get("/archive", a.archiveURL)

	// Automations.
	r.Get("/automations", a.listAutomations)
	r.Post("/automations/create", a.createAutomation)
	r.Get("/automations/duplicate", a.duplicateAutomation)
	r.Get("/automations/details", a.automationDetails)
	r.Get("/automations/pause", a.pauseAutomation)
	r.Get("/automations/set-live", a.setLiveAutomation)
	r.Delete("/automations/delete", a.deleteAutomation)
	r.Post("/automations/bulk-delete", a.bulkDeleteAutomations)
	r.Get("/automations/schedule", a.listAutomationSchedules)
	r.Post("/automations/schedule/create", a.createAutomationSchedule)
	r.Post("/automations/trigger", a.triggerAutomation) // beyond the spec: an API event enrols a contact

	// Sign-up forms (decisions.md 10).
	a.mountForms(r)

	// Beyond the spec: the organisation profile and the editor's saved blocks.
	r.Get("/org-profile", a.orgProfile)
	r.Post("/org-profile", a.saveOrgProfile)
	r.Get("/blocks", a.listBlocks)
	r.Post("/blocks", a.createBlock)
	r.Delete("/blocks/delete", a.deleteBlock)
}
