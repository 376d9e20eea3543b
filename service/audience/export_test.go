package audience

import "database/sql"

// OnStmtPrepared sets the hook called with each statement an import
// prepares, until the returned restore is called.
func OnStmtPrepared(f func(*sql.Stmt)) (restore func()) {
	stmtPrepared = f
	return func() { stmtPrepared = nil }
}

// ExportProgress has x record its progress after every batch and calls f
// with each rows_done recorded, until restore.
func ExportProgress(x *Exports, f func(jobID, rowsDone int64)) (restore func()) {
	x.progressEvery = 0
	exportProgressHook = f
	return func() { exportProgressHook = nil; x.progressEvery = exportProgressEvery }
}
