// Package audience is who herald mails: contact types, custom fields,
// contacts and their history, conditions and segments (with "why is this
// address in or out"), CSV imports and uploads, exports (streamed and as
// background jobs), unsubscribe groups and unsubscribers.
//
// It imports core, record and identity (the audit log); campaign imports
// it.
package audience
