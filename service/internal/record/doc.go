// Package record holds the writes and row vocabulary more than one area of
// the service shares: daily figures, event rows for the event webhooks,
// the verdict recorders (hard and soft bounces, blocks, deferrals),
// suppression and unsubscribe writes, and how ledger, contact, mail and
// A/B rows are read.
//
// record imports core and the packages below the service, never an area.
package record
