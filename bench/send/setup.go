package main

import (
	"context"
	"database/sql"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"herald/delivery"
	"herald/models"
	"herald/service"
)

// fixture is what the benchmark's database holds before herald starts.
type fixture struct {
	keys      service.Keys
	account   int64
	sender    int64
	group     int64
	audience  int64 // the contact type of -contacts contacts
	probe     int64 // a small contact type, for herald's sample messages
	probeSize int
	fromEmail string
}

const (
	senderDomain = "news.cafe-zoe.example.com"
	probeSize    = 200 // contacts of the probe send (herald's sample messages)
)

// prepare migrates the database at dsn and fills it through the service
// layer, as service/sending_test.go does: an account with its keys, a
// verified sender, an unsubscribe group, and two contact types, one of
// contacts contacts (bulk-inserted) and a small one for the probe send.
// With dkim, the account gets an RSA 2048 key for the sender's domain, as
// the sender's DNS page makes it, and herald then signs every message.
func prepare(ctx context.Context, dsn string, contacts int, dkim bool) (*fixture, error) {
	db, err := service.OpenDB(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	// No transport: the sender's verification mail is kept in the outbox.
	svc, err := service.New(db, service.Config{})
	if err != nil {
		return nil, err
	}
	f := &fixture{probeSize: probeSize, fromEmail: "hello@" + senderDomain}
	u, keys, err := svc.Accounts.Create(ctx, service.AccountInput{Name: "Bench", Email: "owner@cafe-zoe.example.com", Password: "bench-password-1"})
	if err != nil {
		return nil, fmt.Errorf("account: %w", err)
	}
	f.account, f.keys = u.ID, keys
	snd, err := svc.Senders.Create(ctx, f.account, service.SenderInput{
		FromName: "Café Zoë", FromEmail: f.fromEmail, ReplyToEmail: "team@cafe-zoe.example.com",
		CountryID: "250", CompanyAddress: "12 rue des Martyrs", ZipCode: "75009", Nickname: "cafe",
	})
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	if _, err := svc.Senders.Verify(ctx, snd.VerifyToken); err != nil {
		return nil, fmt.Errorf("verify sender: %w", err)
	}
	f.sender = snd.ID
	g, err := svc.Groups.Create(ctx, f.account, service.GroupInput{GroupName: "Newsletter", Description: "Our monthly news", IsDisplay: "1"})
	if err != nil {
		return nil, fmt.Errorf("group: %w", err)
	}
	f.group = g.ID
	if dkim {
		key, err := delivery.GenerateDKIM(senderDomain, "herald", delivery.DKIMRSA)
		if err != nil {
			return nil, err
		}
		pem, err := key.PrivateKeyPEM()
		if err != nil {
			return nil, err
		}
		row := models.SenderDomain{UserID: f.account, Domain: senderDomain, Selector: "herald", Algorithm: delivery.DKIMRSA,
			PrivateKey: pem, CreatedAt: models.NewTimestamp(models.Now())}
		if err := db.W.WithContext(ctx).Create(&row).Error; err != nil {
			return nil, fmt.Errorf("DKIM key: %w", err)
		}
	}
	for _, t := range []struct {
		name   string
		prefix string
		n      int
		id     *int64
	}{{"Customers", "c", contacts, &f.audience}, {"Probe", "p", probeSize, &f.probe}} {
		ct, err := svc.ContactTypes.Create(ctx, f.account, t.name)
		if err != nil {
			return nil, fmt.Errorf("contact type: %w", err)
		}
		*t.id = ct.ID
		if err := insertContacts(ctx, db, f.account, ct.ID, t.prefix, t.n); err != nil {
			return nil, fmt.Errorf("contacts: %w", err)
		}
	}
	return f, nil
}

var (
	firstNames = []string{"James", "Mary", "John", "Patricia", "Robert", "Jennifer", "Michael", "Linda", "William", "Elizabeth",
		"David", "Barbara", "Richard", "Susan", "Joseph", "Jessica", "Thomas", "Sarah", "Charles", "Karen", "Amélie", "Jürgen", "Søren", "Zoë"}
	lastNames = []string{"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez", "Martinez",
		"Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Müller", "O'Brien"}
	cities  = []string{"Paris", "Lyon", "Montréal", "New York", "Berlin", "München", "London", "Madrid", "São Paulo", "Tokyo"}
	domains = []string{"example.com", "example.org", "mail.example.net", "inbox.example.co.uk"}
)

// insertContacts adds n contacts to the type in one transaction of
// multi-row INSERTs (500 rows, 4,000 parameters each: under SQLite's and
// PostgreSQL's limits). Addresses are unique: prefix, a sequence number and
// a name; the names carry accents and an apostrophe so that escaping and
// quoted-printable encoding have something to do.
func insertContacts(ctx context.Context, db *service.DB, account, typeID int64, prefix string, n int) error {
	sqlDB, err := db.SQL()
	if err != nil {
		return err
	}
	const cols, perRow = "(user_id, contact_type_id, first_name, last_name, email, city, created_at, updated_at)", 8
	const batch = 500
	pg := db.Dialect == "postgres"
	stmtFor := func(rows int) string {
		var b strings.Builder
		b.WriteString("INSERT INTO contacts " + cols + " VALUES ")
		for r := range rows {
			if r > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for c := range perRow {
				if c > 0 {
					b.WriteByte(',')
				}
				if pg {
					b.WriteString("$" + strconv.Itoa(r*perRow+c+1))
				} else {
					b.WriteByte('?')
				}
			}
			b.WriteByte(')')
		}
		return b.String()
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	full, err := tx.PrepareContext(ctx, stmtFor(batch))
	if err != nil {
		return err
	}
	defer full.Close()
	rng := mrand.New(mrand.NewPCG(uint64(typeID), 7))
	now := time.Now().UTC().Truncate(time.Microsecond)
	args := make([]any, 0, batch*perRow)
	flush := func(stmt *sql.Stmt) error {
		if len(args) == 0 {
			return nil
		}
		var err error
		if stmt != nil {
			_, err = stmt.ExecContext(ctx, args...)
		} else {
			_, err = tx.ExecContext(ctx, stmtFor(len(args)/perRow), args...)
		}
		args = args[:0]
		return err
	}
	for i := 1; i <= n; i++ {
		first := firstNames[rng.IntN(len(firstNames))]
		last := lastNames[rng.IntN(len(lastNames))]
		local := strings.ToLower(strings.Map(asciiOnly, first)) + "." + strings.ToLower(strings.Map(asciiOnly, last))
		email := fmt.Sprintf("%s%06d.%s@%s", prefix, i, local, domains[rng.IntN(len(domains))])
		args = append(args, account, typeID, first, last, email, cities[rng.IntN(len(cities))], now, now)
		if len(args) == batch*perRow {
			if err := flush(full); err != nil {
				return err
			}
		}
	}
	if err := flush(nil); err != nil {
		return err
	}
	return tx.Commit()
}

// asciiOnly keeps letters a-z and A-Z of a name for its address.
func asciiOnly(r rune) rune {
	if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
		return r
	}
	return -1
}
