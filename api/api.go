// Package api is the JSON API under /api/: header keys, the envelope, form
// decoding, and one file per resource calling service/.
package api

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/time/rate"

	"herald/service"
)

// Options tune the API edge.
type Options struct {
	// RatePerSecond is the requests per second allowed per key (burst
	// twice that); 0 means no limit.
	RatePerSecond float64
	// MaxUploadBytes bounds a CSV upload (HERALD_MAX_UPLOAD_MB).
	MaxUploadBytes int64
	// MaxSpoolBytes bounds a file kept on disk until its contact type
	// arrives; 0 means service.MaxSpool (tests set less).
	MaxSpoolBytes int64
}

// API holds what every handler needs.
type API struct {
	svc     *service.Service
	opt     Options
	limiter *keyLimiter
	cache   *listCache
}

// New builds the API over svc.
func New(svc *service.Service, opt Options) *API {
	if opt.MaxUploadBytes <= 0 {
		opt.MaxUploadBytes = 1024 << 20
	}
	a := &API{svc: svc, opt: opt, cache: newListCache()}
	if opt.RatePerSecond > 0 {
		a.limiter = &keyLimiter{r: rate.Limit(opt.RatePerSecond), burst: max(1, int(2*opt.RatePerSecond)), m: map[int64]*limitEntry{}}
	}
	return a
}

const (
	localAccount     = "account"
	localListVersion = "list_version" // the account's, read with its keys
)

// account is the id of the authenticated account of the request.
func account(c *fiber.Ctx) int64 { return c.Locals(localAccount).(int64) }

// auth checks the PublicKey and SecretKey headers (spec: Authentication)
// and the per-key rate limit.
func (a *API) auth(c *fiber.Ctx) error {
	pub := strings.TrimSpace(string(c.Request().Header.Peek("PublicKey")))
	sec := strings.TrimSpace(string(c.Request().Header.Peek("SecretKey")))
	if pub == "" || sec == "" {
		errs := fiber.Map{}
		if pub == "" {
			errs["PublicKey"] = []string{"The public key field is required."}
		}
		if sec == "" {
			errs["SecretKey"] = []string{"The secret key field is required."}
		}
		return failure(c, fiber.StatusUnauthorized, errs)
	}
	var id, listVersion int64
	if service.IsNamedKey(pub) {
		// A named key: the same headers, limited to its scope.
		// Outside it the answer is 401 with the failure envelope: the
		// contract's status codes (decisions.md 2) have no 403, and 401 is
		// the one for keys that may not make this request.
		acc, err := a.svc.APIKeys.Check(c.UserContext(), pub, sec)
		if err != nil {
			return fail(c, err)
		}
		if !inScope(c, acc.Scope) {
			return failure(c, fiber.StatusUnauthorized, textKeyScope)
		}
		id, listVersion = acc.AccountID, acc.ListVersion
	} else {
		var err error
		id, listVersion, err = a.svc.Accounts.Check(c.UserContext(), pub, sec)
		if err != nil {
			return fail(c, err)
		}
	}
	if a.limiter != nil {
		if ok, wait := a.limiter.allow(id); !ok {
			c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(wait.Seconds())+1))
			return failure(c, fiber.StatusTooManyRequests, textRateLimited)
		}
	}
	c.Locals(localAccount, id)
	c.Locals(localListVersion, listVersion)
	return c.Next()
}

// keyLimiter is a token bucket per account key.
type keyLimiter struct {
	mu    sync.Mutex
	r     rate.Limit
	burst int
	m     map[int64]*limitEntry
	sweep time.Time
}

type limitEntry struct {
	lim  *rate.Limiter
	seen time.Time
}

func (k *keyLimiter) allow(id int64) (bool, time.Duration) {
	now := time.Now()
	k.mu.Lock()
	e := k.m[id]
	if e == nil {
		e = &limitEntry{lim: rate.NewLimiter(k.r, k.burst)}
		k.m[id] = e
	}
	e.seen = now
	if now.Sub(k.sweep) > time.Minute { // forget idle keys
		for key, v := range k.m {
			if now.Sub(v.seen) > time.Minute {
				delete(k.m, key)
			}
		}
		k.sweep = now
	}
	k.mu.Unlock()
	r := e.lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// filter reads the optional list narrowing of the query string (beyond
// the spec: page, per_page, search).
func filter(c *fiber.Ctx) service.ListFilter {
	return service.ListFilter{
		Search:  strings.Clone(c.Query("search")),
		Page:    c.QueryInt("page"),
		PerPage: c.QueryInt("per_page"),
	}
}

// queryID reads an id from the query string (or the body); a missing or
// malformed id is not found.
func queryID(c *fiber.Ctx, f *form, key string) (int64, error) {
	v := c.Query(key)
	if v == "" && f != nil {
		v = f.Get(key)
	}
	return service.ParseID(v)
}

// updateID reads the id of an update from the query string or the body:
// 0 when the request gives none (the service answers it as a missing
// parameter, with the body's problems), -1 when it is not an id (it names
// no record: not found, once the body is valid).
func updateID(c *fiber.Ctx, f *form, key string) int64 {
	v := c.Query(key)
	if v == "" {
		v = f.Get(key)
	}
	if strings.TrimSpace(v) == "" {
		return 0
	}
	id, err := service.ParseID(v)
	if err != nil {
		return -1
	}
	return id
}

// parseIDs reads the strIds array of a bulk delete.
func parseIDs(f *form) ([]int64, error) {
	return service.ParseIDs("strIds", f.Array("strIds"))
}
