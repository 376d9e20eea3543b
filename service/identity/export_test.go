package identity

// KeyStmts is the number of driver connections the key check holds a
// prepared statement for.
func KeyStmts(a *Accounts) int {
	if a.keys == nil {
		return 0
	}
	a.keys.mu.Lock()
	defer a.keys.mu.Unlock()
	return len(a.keys.stmts)
}

// MaxKeyStmts is maxKeyStmts.
const MaxKeyStmts = maxKeyStmts
