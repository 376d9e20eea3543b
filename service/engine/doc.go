// Package engine sends: the scheduler and its rounds (reclaim, start due
// sends, decide A/B tests, complete, purge, notices, automations), the
// resolution of a send's audience into the ledger (with the A/B and
// local-time planners), the ledger that claims messages and records their
// outcomes, the liveness of processes sharing one database, the compiled
// mail, and the tracking of opens, clicks and unsubscribes.
//
// It imports core, record and deliverability (herald's own mail for the
// notices); campaign imports it.
package engine
