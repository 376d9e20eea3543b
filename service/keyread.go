package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"sync"
)

// keyQuery is the read behind every API request: the account's row by its
// unique public key.
const keyQuery = "SELECT id, secret_hash, list_version FROM users WHERE public_key = ?"

// maxKeyStmts bounds keyReader.stmts: connections the pool has closed
// leave their entries behind until the map is this large, and then every
// entry is dropped (a dropped statement is not closed, since its
// connection may be in use; the driver frees it with the connection).
const maxKeyStmts = 64

// keyReader runs keyQuery on a reader connection through the driver's own
// prepared statement, one per connection, instead of through sql.Stmt:
// database/sql's per-call bookkeeping (finding the connection's statement,
// converting the argument, the Rows and Row wrappers, Scan's conversions)
// cost as much CPU as the read itself. The read still happens on every
// call, in a transaction of its own: nothing about the keys is kept in
// memory, so a rotation by any process takes effect at the next request.
type keyReader struct {
	db    *sql.DB
	query string // keyQuery with the dialect's placeholder

	mu    sync.Mutex
	stmts map[any]driver.Stmt // by driver connection
}

func newKeyReader(db *sql.DB, d dialect) *keyReader {
	return &keyReader{db: db, query: d.driverPlaceholders(keyQuery), stmts: map[any]driver.Stmt{}}
}

// check reads the row of publicKey and compares the SHA-256 of secretKey
// with its stored hash in constant time. It answers the account id and
// list version when they match, ErrUnauthorized when they do not or when
// no account has the public key.
func (k *keyReader) check(ctx context.Context, publicKey, secretKey string) (accountID, listVersion int64, err error) {
	// Without cancellation: the driver would otherwise watch the context
	// in a goroutine of its own for a read of one indexed row.
	ctx = context.WithoutCancel(ctx)
	// A connection found broken is dropped by the pool: try another, as
	// database/sql does for its own queries.
	for range 3 {
		accountID, listVersion, err = k.checkOnce(ctx, publicKey, secretKey)
		if !errors.Is(err, driver.ErrBadConn) {
			break
		}
	}
	return accountID, listVersion, err
}

func (k *keyReader) checkOnce(ctx context.Context, publicKey, secretKey string) (accountID, listVersion int64, err error) {
	conn, err := k.db.Conn(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	sum := sha256.Sum256([]byte(secretKey))
	err = conn.Raw(func(dc any) error {
		st, err := k.stmt(ctx, dc)
		if err != nil {
			return err
		}
		accountID, listVersion, err = k.read(ctx, st, publicKey, sum[:])
		if err != nil && !errors.Is(err, ErrUnauthorized) {
			// The statement may be broken: prepare it again next time.
			// Closing it is safe here, the connection is ours until Raw
			// returns.
			k.mu.Lock()
			delete(k.stmts, dc)
			k.mu.Unlock()
			_ = st.Close()
		}
		return err
	})
	return accountID, listVersion, err
}

// stmt is the driver connection's prepared keyQuery, prepared on first use.
func (k *keyReader) stmt(ctx context.Context, dc any) (driver.Stmt, error) {
	k.mu.Lock()
	st, ok := k.stmts[dc]
	k.mu.Unlock()
	if ok {
		return st, nil
	}
	var err error
	if p, ok := dc.(driver.ConnPrepareContext); ok {
		st, err = p.PrepareContext(ctx, k.query)
	} else if c, ok := dc.(driver.Conn); ok {
		st, err = c.Prepare(k.query)
	} else {
		return nil, fmt.Errorf("key check: driver connection %T cannot prepare", dc)
	}
	if err != nil {
		return nil, err
	}
	if _, ok := st.(driver.StmtQueryContext); !ok {
		_ = st.Close()
		return nil, fmt.Errorf("key check: driver statement %T cannot query with a context", st)
	}
	k.mu.Lock()
	if len(k.stmts) >= maxKeyStmts {
		clear(k.stmts)
	}
	k.stmts[dc] = st
	k.mu.Unlock()
	return st, nil
}

// read runs st for publicKey and checks the stored hash against sum while
// the row's bytes are still the driver's.
func (k *keyReader) read(ctx context.Context, st driver.Stmt, publicKey string, sum []byte) (accountID, listVersion int64, err error) {
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: publicKey}})
	if err != nil {
		return 0, 0, err
	}
	defer rows.Close()
	var dest [3]driver.Value
	if err := rows.Next(dest[:]); err != nil {
		if err == io.EOF {
			return 0, 0, ErrUnauthorized
		}
		return 0, 0, err
	}
	id, ok1 := dest[0].(int64)
	version, ok2 := dest[2].(int64)
	var hash []byte
	switch h := dest[1].(type) {
	case []byte:
		hash = h
	case string:
		hash = []byte(h)
	}
	if !ok1 || !ok2 || hash == nil {
		return 0, 0, fmt.Errorf("key check: unexpected column types %T, %T, %T", dest[0], dest[1], dest[2])
	}
	if subtle.ConstantTimeCompare(sum, hash) != 1 {
		return 0, 0, ErrUnauthorized
	}
	return id, version, nil
}
