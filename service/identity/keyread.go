package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"herald/service/core"
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
// The named keys' check (apikeys.go) runs its own query the same way.
type keyReader struct {
	db    *sql.DB
	query string // keyQuery (or namedKeyQuery) with the dialect's placeholder
	cols  int    // the columns of its row

	mu    sync.Mutex
	stmts map[any]driver.Stmt // by driver connection
}

func newKeyReader(db *sql.DB, d core.Dialect) *keyReader {
	return newRowReader(db, d, keyQuery, 3)
}

// newRowReader reads the row of query (one parameter: a public key) of
// cols columns.
func newRowReader(db *sql.DB, d core.Dialect, query string, cols int) *keyReader {
	return &keyReader{db: db, query: d.DriverPlaceholders(query), cols: cols, stmts: map[any]driver.Stmt{}}
}

// check reads the row of publicKey and compares the SHA-256 of secretKey
// with its stored hash in constant time. It answers the account id and
// list version when they match, ErrUnauthorized when they do not or when
// no account has the public key.
func (k *keyReader) check(ctx context.Context, publicKey, secretKey string) (accountID, listVersion int64, err error) {
	sum := sha256.Sum256([]byte(secretKey))
	err = k.lookup(ctx, publicKey, func(dest []driver.Value) error {
		id, ok1 := dest[0].(int64)
		version, ok2 := dest[2].(int64)
		hash := bytesOf(dest[1])
		if !ok1 || !ok2 || hash == nil {
			return fmt.Errorf("key check: unexpected column types %T, %T, %T", dest[0], dest[1], dest[2])
		}
		if subtle.ConstantTimeCompare(sum[:], hash) != 1 {
			return core.ErrUnauthorized
		}
		accountID, listVersion = id, version
		return nil
	})
	if err != nil {
		return 0, 0, core.Wrap(err, "accounts: check keys")
	}
	return accountID, listVersion, nil
}

// bytesOf is a column's bytes as the driver holds them (nil when it is
// neither bytes nor text).
func bytesOf(v driver.Value) []byte {
	switch h := v.(type) {
	case []byte:
		return h
	case string:
		return []byte(h)
	}
	return nil
}

// lookup reads the row of publicKey and hands it to use while its bytes
// are still the driver's (use copies what it keeps). No row is
// ErrUnauthorized; use's error is lookup's.
func (k *keyReader) lookup(ctx context.Context, publicKey string, use func(dest []driver.Value) error) (err error) {
	// Without cancellation: the driver would otherwise watch the context
	// in a goroutine of its own for a read of one indexed row.
	ctx = context.WithoutCancel(ctx)
	// A connection found broken is dropped by the pool: try another, as
	// database/sql does for its own queries.
	for range 3 {
		err = k.lookupOnce(ctx, publicKey, use)
		if !errors.Is(err, driver.ErrBadConn) {
			break
		}
	}
	return err
}

func (k *keyReader) lookupOnce(ctx context.Context, publicKey string, use func(dest []driver.Value) error) error {
	conn, err := k.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("key check: connect: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		st, err := k.stmt(ctx, dc)
		if err != nil {
			return err
		}
		err = k.read(ctx, st, publicKey, use)
		if err != nil && !errors.Is(err, core.ErrUnauthorized) {
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
		return nil, fmt.Errorf("key check: prepare: %w", err)
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

// read runs st for publicKey and hands the row to use.
func (k *keyReader) read(ctx context.Context, st driver.Stmt, publicKey string, use func(dest []driver.Value) error) error {
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: publicKey}})
	if err != nil {
		return fmt.Errorf("key check: query: %w", err)
	}
	defer rows.Close()
	dest := make([]driver.Value, k.cols)
	if err := rows.Next(dest); err != nil {
		if err == io.EOF {
			return core.ErrUnauthorized
		}
		return fmt.Errorf("key check: read: %w", err)
	}
	return use(dest)
}
