package service

import "database/sql"

// OnStmtPrepared sets the hook called with each statement an import
// prepares, until the returned restore is called.
func OnStmtPrepared(f func(*sql.Stmt)) (restore func()) {
	stmtPrepared = f
	return func() { stmtPrepared = nil }
}

// MergeSPF is mergeSPF, for the tests of the SPF proposal.
var MergeSPF = mergeSPF
