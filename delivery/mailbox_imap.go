package delivery

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"

	"github.com/emersion/go-imap/v2"
	"github.com/emersion/go-imap/v2/imapclient"
)

// pollIMAP is one poll over IMAP: log in, select the folder, read the
// oldest Batch mails not yet deleted or set aside (BODY.PEEK, so reading
// marks nothing), then flag and expunge.
func (m *Mailbox) pollIMAP(ctx context.Context) (handled int, err error) {
	c, stop, err := m.dialIMAP(ctx)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	defer stop()
	fail := func(what string, err error) (int, error) {
		if ctx.Err() != nil {
			return handled, ctx.Err()
		}
		return handled, fmt.Errorf("imap %s: %w", what, err)
	}
	if err := c.Login(m.url.Username, m.url.Password).Wait(); err != nil {
		return fail("login", err)
	}
	sel, err := c.Select(m.url.Folder, nil).Wait()
	if err != nil {
		return fail("select "+m.url.Folder, err)
	}
	// A server that keeps no keywords on this folder: set-aside mails are
	// \Seen only, and only unseen mails are read. No PERMANENTFLAGS at all
	// means every flag is kept (RFC 3501, 7.1).
	keyword := sel.PermanentFlags == nil ||
		slices.Contains(sel.PermanentFlags, imap.FlagWildcard) ||
		slices.Contains(sel.PermanentFlags, imap.Flag(UnparsedKeyword))
	criteria := &imap.SearchCriteria{NotFlag: []imap.Flag{imap.FlagDeleted}}
	// \Flagged: a person who opens the mailbox sees what herald could not
	// read.
	aside := []imap.Flag{imap.FlagSeen, imap.FlagFlagged}
	if keyword {
		criteria.NotFlag = append(criteria.NotFlag, imap.Flag(UnparsedKeyword))
		aside = append(aside, imap.Flag(UnparsedKeyword))
	} else {
		criteria.NotFlag = append(criteria.NotFlag, imap.FlagSeen)
	}
	found, err := c.UIDSearch(criteria, nil).Wait()
	if err != nil {
		return fail("search", err)
	}
	uids := found.AllUIDs()
	slices.Sort(uids)
	if len(uids) > m.cfg.Batch {
		uids = uids[:m.cfg.Batch]
	}
	if len(uids) == 0 {
		return 0, c.Logout().Wait()
	}
	sizes, err := c.Fetch(imap.UIDSetNum(uids...), &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
	if err != nil {
		return fail("fetch sizes", err)
	}
	size := make(map[imap.UID]int64, len(sizes))
	for _, s := range sizes {
		size[s.UID] = s.RFC822Size
	}
	var done, setAsideUIDs imap.UIDSet
	var firstErr error
	removed := 0
	// putAside counts a mail set aside (UIDVALIDITY/UID names it for good)
	// and flags it below; one not counted is read again next poll.
	putAside := func(uid imap.UID, why string) {
		if err := m.countKept(ctx, fmt.Sprintf("%d/%d", sel.UIDValidity, uid), why); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		setAsideUIDs.AddNum(uid)
	}
	for _, uid := range uids {
		sz, ok := size[uid]
		if !ok {
			continue // expunged by someone else since the search
		}
		if sz > m.cfg.MaxMessageSize {
			putAside(uid, KeptTooLarge)
			continue
		}
		raw, err := m.fetchIMAP(c, uid)
		if errors.Is(err, errNoBody) {
			continue // expunged by someone else since the search
		}
		if err != nil {
			return fail("fetch", err)
		}
		if int64(len(raw)) > m.cfg.MaxMessageSize {
			putAside(uid, KeptTooLarge) // the server said less than it holds
			continue
		}
		v, why, err := m.judge(ctx, raw)
		switch v {
		case remove:
			done.AddNum(uid)
			removed++
		case setAside:
			putAside(uid, why)
		case keep:
			if firstErr == nil {
				firstErr = err
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(setAsideUIDs) > 0 {
		store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: aside}
		if err := c.Store(setAsideUIDs, store, nil).Close(); err != nil {
			return fail("flag set-aside mails", err)
		}
	}
	if len(done) > 0 {
		store := &imap.StoreFlags{Op: imap.StoreFlagsAdd, Silent: true, Flags: []imap.Flag{imap.FlagDeleted}}
		if err := c.Store(done, store, nil).Close(); err != nil {
			return fail("flag handled mails deleted", err)
		}
		// UID EXPUNGE removes only these mails; a server without UIDPLUS
		// gets EXPUNGE, which also removes what others flagged \Deleted
		// in this folder (a bounce folder is herald's alone).
		var expunge *imapclient.ExpungeCommand
		if caps := c.Caps(); caps.Has(imap.CapUIDPlus) || caps.Has(imap.CapIMAP4rev2) {
			expunge = c.UIDExpunge(done)
		} else {
			expunge = c.Expunge()
		}
		if err := expunge.Close(); err != nil {
			return fail("expunge", err)
		}
		handled = removed
	}
	if ctx.Err() != nil {
		return handled, ctx.Err()
	}
	if err := c.Logout().Wait(); err != nil && firstErr == nil {
		firstErr = fmt.Errorf("imap logout: %w", err)
	}
	return handled, firstErr
}

var errNoBody = errors.New("the server sent no body")

// fetchIMAP downloads one mail, at most MaxMessageSize+1 bytes of it (a
// partial fetch, so a server that under-reported its size still sends no
// more).
func (m *Mailbox) fetchIMAP(c *imapclient.Client, uid imap.UID) ([]byte, error) {
	section := &imap.FetchItemBodySection{Peek: true, Partial: &imap.SectionPartial{Offset: 0, Size: m.cfg.MaxMessageSize + 1}}
	cmd := c.Fetch(imap.UIDSetNum(uid), &imap.FetchOptions{UID: true, BodySection: []*imap.FetchItemBodySection{section}})
	defer cmd.Close()
	var raw []byte
	found := false
	for msg := cmd.Next(); msg != nil; msg = cmd.Next() {
		for item := msg.Next(); item != nil; item = msg.Next() {
			body, ok := item.(imapclient.FetchItemDataBodySection)
			if !ok || body.Literal == nil {
				continue
			}
			b, err := io.ReadAll(io.LimitReader(body.Literal, m.cfg.MaxMessageSize+1))
			if err != nil {
				return nil, err
			}
			raw, found = b, true
		}
	}
	if err := cmd.Close(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errNoBody
	}
	return raw, nil
}

// dialIMAP connects as the URL says. The connection closes when ctx ends
// (stop undoes that); imapclient bounds each answer (30 s) by itself.
func (m *Mailbox) dialIMAP(ctx context.Context) (c *imapclient.Client, stop func(), err error) {
	d := &net.Dialer{Timeout: m.cfg.Timeout}
	var conn net.Conn
	if m.url.TLS == TLSImplicit {
		cfg := m.tlsConfig()
		if cfg.NextProtos == nil {
			cfg.NextProtos = []string{"imap"}
		}
		conn, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", m.url.Addr())
	} else {
		conn, err = d.DialContext(ctx, "tcp", m.url.Addr())
	}
	if err != nil {
		return nil, nil, fmt.Errorf("imap connect %s: %w", m.url.Addr(), err)
	}
	stop = closeOnDone(ctx, conn)
	opts := &imapclient.Options{TLSConfig: m.tlsConfig()}
	if m.url.TLS == TLSStartTLS {
		c, err = imapclient.NewStartTLS(conn, opts) // refuses a server without STARTTLS
	} else {
		c = imapclient.New(conn, opts)
	}
	if err == nil {
		err = c.WaitGreeting()
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("imap greeting: %w", err)
	}
	return c, stop, nil
}
