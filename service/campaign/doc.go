// Package campaign is what a marketer sends: designs and the template
// library, single sends (with their A/B and local-time options, calendar,
// statistics and exports, pause and resume), automations and their
// enrolment, and the pre-send checklist.
//
// It imports core, record and the areas it builds on: deliverability
// (senders, herald's own mail), identity (the audit log), audience
// (contacts, groups) and engine (signals, audience counts, test mails).
package campaign
