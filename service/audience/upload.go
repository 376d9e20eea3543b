package audience

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"herald/models"
	"herald/service/core"
)

// LimitReader reads from r and fails with tooLarge once more than n bytes
// were read (uploads: the body is read as a stream, so its size is known
// only as it arrives).
func LimitReader(r io.Reader, n int64, tooLarge error) io.Reader {
	return &limitedReader{r: r, n: n, err: tooLarge}
}

type limitedReader struct {
	r   io.Reader
	n   int64
	err error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n < 0 {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	if l.n < 0 {
		return n, l.err
	}
	return n, err
}

// MaxSpool is the most of a CSV file kept on disk while its contact type
// is not yet known (the file part came before contact_type_id). A client
// with a larger file names the type first, in the query string or in a
// part before the file: then the file is imported as it arrives and never
// written to disk.
const MaxSpool int64 = 128 << 20

// Spool returns a new temporary file (in $TMPDIR) for an upload, already
// unlinked: the open file stays usable, and whatever happens to the
// request or the process (kill -9 included), nothing is left behind once
// it is closed. Callers close it on every path.
func Spool() (*os.File, error) {
	f, err := os.CreateTemp("", "herald-upload-*.csv")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// MaxUploads is how many CSV uploads, with the imports they start, one
// account may have in progress at once, across the API, the console and
// every process sharing the database.
const MaxUploads = 2

// ErrTooManyUploads refuses an upload over MaxUploads.
var ErrTooManyUploads = &core.Error{Code: core.CodeRateLimited, Message: "Too many uploads at once. Wait for one to finish and try again."}

// An upload holds its slot by refreshing it; a slot not refreshed for
// uploadStale is free again (its process died).
const (
	uploadRefresh = 30 * time.Second
	uploadStale   = 2 * time.Minute
)

// AcquireUpload takes one of the account's MaxUploads upload slots, held
// (refreshed in the background) until release is called; call it once
// the upload and its import are over. Errors: ErrTooManyUploads.
func (s *Imports) AcquireUpload(ctx context.Context, accountID int64) (release func(), err error) {
	holder, now := core.RandomID(12), s.db.Now()
	db := s.db.W.WithContext(ctx)
	if err := db.Exec("DELETE FROM upload_slots WHERE user_id = ? AND seen_at < ?", accountID, now.Add(-uploadStale)).Error; err != nil {
		return nil, fmt.Errorf("imports: forget stale upload slots of account %d: %w", accountID, err)
	}
	slot := 0
	for i := 1; i <= MaxUploads && slot == 0; i++ {
		// The primary key (user_id, slot) settles a race between processes.
		res := db.Exec("INSERT INTO upload_slots (user_id, slot, holder, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING", accountID, i, holder, now)
		if res.Error != nil {
			return nil, fmt.Errorf("imports: take upload slot %d of account %d: %w", i, accountID, res.Error)
		}
		if res.RowsAffected == 1 {
			slot = i
		}
	}
	if slot == 0 {
		return nil, ErrTooManyUploads
	}
	stop, done := make(chan struct{}), make(chan struct{})
	bg := context.WithoutCancel(ctx)
	go func() {
		defer close(done)
		t := time.NewTicker(uploadRefresh)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := s.db.W.WithContext(bg).Exec("UPDATE upload_slots SET seen_at = ? WHERE user_id = ? AND slot = ? AND holder = ?",
					s.db.Now(), accountID, slot, holder).Error; err != nil {
					slog.Error("upload slot: refresh", "error", err)
				}
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			if err := s.db.W.WithContext(bg).Exec("DELETE FROM upload_slots WHERE user_id = ? AND slot = ? AND holder = ?", accountID, slot, holder).Error; err != nil {
				slog.Error("upload slot: release", "error", err)
			}
		})
	}, nil
}

// CheckType checks a contact_type_id as soon as it is known, before the
// file: the account's type, or ErrNotFound.
func (s *Imports) CheckType(ctx context.Context, accountID int64, id string) (int64, error) {
	typeID, err := core.ParseID(id)
	if err != nil {
		return 0, err
	}
	if _, err := contactType(ctx, s.db.R, accountID, typeID); err != nil {
		return 0, err
	}
	return typeID, nil
}

// HasTypes reports whether the account has a contact type to import
// into: without one, a file whose type is not yet known is not worth
// keeping.
func (s *Imports) HasTypes(ctx context.Context, accountID int64) (bool, error) {
	var ids []int64
	if err := s.db.R.WithContext(ctx).Model(&models.ContactType{}).Where("user_id = ? AND deleted_at IS NULL", accountID).Limit(1).Pluck("id", &ids).Error; err != nil {
		return false, fmt.Errorf("imports: contact types of account %d: %w", accountID, err)
	}
	return len(ids) > 0, nil
}

// An upload is read as long as it keeps a pace: UploadGrace plus the time
// its bytes so far take at UploadMinRate. A large CSV on a slow link is
// read to its end (herald's server otherwise cuts every request at its
// read timeout, 60 s, so a 600 MB file never arrived whole), while a
// client that trickles below the pace is cut as before.
const (
	UploadGrace   = 60 * time.Second
	UploadMinRate = 64 << 10 // bytes per second
)

// PacedReader reads an upload from r, moving the connection's read
// deadline (setDeadline) forward as bytes arrive: to the upload's start
// plus UploadGrace plus the bytes read at UploadMinRate.
func PacedReader(r io.Reader, setDeadline func(time.Time) error) io.Reader {
	return &pacedReader{r: r, set: setDeadline, start: time.Now()}
}

type pacedReader struct {
	r     io.Reader
	set   func(time.Time) error
	start time.Time
	read  int64
	until time.Time // the deadline last set
}

func (p *pacedReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	due := p.start.Add(UploadGrace + time.Duration(float64(p.read)/UploadMinRate*float64(time.Second)))
	// Moved once a second at most: a deadline is a system call's work.
	if n > 0 && due.Sub(p.until) >= time.Second {
		if serr := p.set(due); serr == nil {
			p.until = due
		}
	}
	return n, err
}
