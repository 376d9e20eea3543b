// Package core is what every area of the service shares: the database and
// its dialect (the one place where SQLite and PostgreSQL differ), the
// service's error type and validation, list filters and batched reads, bulk
// helpers, text helpers, settings (secrets, the tracking key), the actor and
// account carried on a context, and the audit vocabulary.
//
// core imports no other package of service/; the areas import it.
package core
