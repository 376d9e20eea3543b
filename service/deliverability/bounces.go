package deliverability

import (
	"context"
	"fmt"
	"sync"

	"herald/delivery"
	"herald/service/core"
)

// Bounces holds herald's bounce address (HERALD_BOUNCE_ADDRESS) and the
// VERP made on it with the tracking key (decisions.md 7): the return path
// and List-Unsubscribe address of every campaign and automation message,
// and what reports coming back are read with.
type Bounces struct {
	db       *core.DB
	settings *core.Settings
	resolver *sharedResolver // the setup page's MX lookup

	mu      sync.Mutex
	address string
	verp    *delivery.VERP
}

// SetAddress sets the bounce address (plain local@domain, without "+").
// Errors: validation.
func (b *Bounces) SetAddress(address string) error {
	if _, err := delivery.NewVERP(address, nil); err != nil {
		return core.Invalid("bounce_address", err.Error())
	}
	b.mu.Lock()
	b.address, b.verp = address, nil
	b.mu.Unlock()
	return nil
}

// Address is the plain bounce address ("" before one is set).
func (b *Bounces) Address() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.address
}

// VERP returns the bounce address's VERP, with the tracking key every
// process shares (made once).
func (b *Bounces) VERP(ctx context.Context) (*delivery.VERP, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.verp != nil {
		return b.verp, nil
	}
	key, err := b.settings.TrackingKey(ctx)
	if err != nil {
		return nil, fmt.Errorf("bounces: tracking key: %w", err)
	}
	address := b.address
	if address == "" {
		address = DefaultBounceAddress("")
	}
	v, err := delivery.NewVERP(address, key)
	if err != nil {
		return nil, err
	}
	b.verp = v
	return v, nil
}
