// Package identity is who may do what: accounts and sign-up, logins and
// password resets, members, roles and their actions, sessions, API keys
// and how a request's key is read, two-factor codes, and the audit log.
//
// It imports core and deliverability (for the mail it sends: sign-up
// links, resets, invitations); audience and campaign import it (the audit
// log).
package identity
