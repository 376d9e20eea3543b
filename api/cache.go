package api

import (
	"sync"

	"github.com/gofiber/fiber/v2"
)

// listCache keeps the encoded answers of the suppression lists (global
// unsubscribers, groups, group recipients, notification recipients) per
// account, route and query, with the account's list version they were
// built at. An answer is served only while that version is still the
// account's (one primary-key read per request), so it is never stale,
// whichever process made the change.
type listCache struct {
	mu      sync.RWMutex
	entries map[cacheKey]cacheEntry
	bytes   int
}

type cacheKey struct {
	account int64
	route   string
	query   string
}

type cacheEntry struct {
	version int64
	body    []byte
}

// Bounds of the cache: only short answers are kept, up to a total size.
const (
	maxCachedAnswer = streamThreshold
	maxCacheBytes   = 64 << 20
)

func newListCache() *listCache { return &listCache{entries: map[cacheKey]cacheEntry{}} }

func (lc *listCache) get(k cacheKey, version int64) ([]byte, bool) {
	lc.mu.RLock()
	e, ok := lc.entries[k]
	lc.mu.RUnlock()
	if !ok || e.version != version {
		return nil, false
	}
	return e.body, true
}

func (lc *listCache) put(k cacheKey, version int64, body []byte) {
	if len(body) > maxCachedAnswer {
		return
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if old, ok := lc.entries[k]; ok {
		lc.bytes -= len(old.body)
	}
	for kk, e := range lc.entries { // make room: drop arbitrary entries
		if lc.bytes+len(body) <= maxCacheBytes {
			break
		}
		lc.bytes -= len(e.body)
		delete(lc.entries, kk)
	}
	lc.entries[k] = cacheEntry{version: version, body: body}
	lc.bytes += len(body)
}

// cachedList answers a suppression list from the cache when its version is
// current, else builds it with build (which calls list) and keeps the
// answer when it is short and successful.
func (a *API) cachedList(c *fiber.Ctx, build func() error) error {
	acct := account(c)
	// The version was read with the keys (auth), in the same row: the
	// answer is current as of this request's own read.
	version, ok := c.Locals(localListVersion).(int64)
	if !ok {
		return build()
	}
	k := cacheKey{account: acct, route: c.Route().Path, query: string(c.Request().URI().QueryString())}
	if body, ok := a.cache.get(k, version); ok {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
		return c.Status(fiber.StatusOK).Send(body)
	}
	if err := build(); err != nil {
		return err
	}
	if c.Response().StatusCode() == fiber.StatusOK && !c.Response().IsBodyStream() {
		a.cache.put(k, version, append([]byte(nil), c.Response().Body()...))
	}
	return nil
}
