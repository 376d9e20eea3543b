// Package deliverability is what decides whether herald's mail reaches the
// inbox: senders and the DNS checks of their domains (SPF, DKIM, DMARC),
// the bounce address and what comes back to it (bounces, complaints,
// provider webhooks, untied reports), suppressions, the event webhooks and
// their dispatcher, herald's own mail (verification, notices, the outbox),
// and the dashboard's figures.
//
// It imports core and record; identity, engine and campaign import it.
package deliverability
