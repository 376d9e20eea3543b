// Package servicetest is the test fixture of the service's tests: a
// service over a real database (SQLite, or PostgreSQL when
// HERALD_TEST_DATABASE names one), a real SMTP sink, the engine on a
// clock the test moves, and the steps tests take on them (accounts,
// contact types, sends, automations, reports, waits).
package servicetest
