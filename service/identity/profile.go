package identity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"strconv"
	"strings"
	"time"

	"gorm.io/gorm/clause"

	"herald/models"
	"herald/service/core"
	"herald/world"
)

// Profiles keeps each account's organisation profile: its company name,
// postal address, brand colour and logo.
type Profiles struct {
	db      *core.DB
	now     func() time.Time
	audit   *Audit
	baseURL string // herald's public address, for the logo's absolute address
}

// The limits of a logo.
const (
	// MaxLogoBytes is the largest logo file accepted.
	MaxLogoBytes = 512 << 10
	// MaxLogoSide is the largest width or height accepted, checked before
	// the image is decoded, so that a small file cannot claim a huge canvas.
	MaxLogoSide = 2000
)

// ProfileInput is the profile form: text as typed, the country as the
// world package's id ("" for none), the colour as "#rrggbb" ("" for none).
type ProfileInput struct {
	CompanyName  string
	AddressLine1 string
	AddressLine2 string
	City         string
	PostalCode   string
	CountryID    string
	BrandColor   string
	// Logo is an uploaded logo (nil: the logo stays as it is), RemoveLogo
	// takes the logo away (ignored when a new one comes).
	Logo       []byte
	RemoveLogo bool
	// LogoNotFile says a logo came as text rather than as a file (an API
	// body's value): refused, so that the caller does not believe it was
	// stored.
	LogoNotFile bool
}

// ReadLogo reads an uploaded logo file for ProfileInput.Logo: at most
// MaxLogoBytes and one byte more (Save refuses a larger one by its size);
// an empty file is an empty, not a nil, logo (Save says so).
func ReadLogo(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxLogoBytes+1))
	if b == nil {
		b = []byte{}
	}
	return b, err
}

// Get returns the account's profile without its logo's bytes (an empty
// profile when none was saved).
func (p *Profiles) Get(ctx context.Context, accountID int64) (*models.OrgProfile, error) {
	return core.ReadProfile(ctx, p.db.R, accountID)
}

// ProfileView is the profile as the API answers it: the stored fields, the
// postal address on one line and the logo's absolute address ("" for no
// logo).
type ProfileView struct {
	Profile *models.OrgProfile
	Address string
	LogoURL string
}

// View returns the account's profile with its one-line address and its
// logo's absolute address (an empty profile when none was saved).
func (p *Profiles) View(ctx context.Context, accountID int64) (ProfileView, error) {
	pr, err := p.Get(ctx, accountID)
	if err != nil {
		return ProfileView{}, err
	}
	b := core.BrandOf(pr)
	return ProfileView{Profile: pr, Address: b.Address, LogoURL: b.LogoURL(p.baseURL)}, nil
}

// Brand returns what pages show of the account's profile.
func (p *Profiles) Brand(ctx context.Context, accountID int64) (core.Brand, error) {
	return core.ReadBrand(ctx, p.db.R, accountID)
}

// Save validates and stores the account's profile and returns it (its
// logo's bytes left out). A logo is checked and re-encoded (PNG stays PNG,
// JPEG stays JPEG; nothing of the file but its pixels is kept, so no
// script, metadata or location travels on). Errors: validation
// (company_name, address_line1, address_line2, city, postal_code:
// single lines of at most 255, 255, 255, 100 and 20 characters;
// country_id: a country; brand_color: #rrggbb; logo: a PNG or JPEG of at
// most MaxLogoBytes and MaxLogoSide pixels a side, given as a file).
func (p *Profiles) Save(ctx context.Context, accountID int64, in ProfileInput) (*models.OrgProfile, error) {
	pr := core.Problems{}
	row := models.OrgProfile{UserID: accountID}
	text := func(field, v string, n int) string {
		v = strings.TrimSpace(v)
		pr.MaxLen(field, v, n)
		pr.SingleLine(field, v)
		pr.NoNUL(field, v)
		return v
	}
	row.CompanyName = text("company_name", in.CompanyName, 255)
	row.AddressLine1 = text("address_line1", in.AddressLine1, 255)
	row.AddressLine2 = text("address_line2", in.AddressLine2, 255)
	row.City = text("city", in.City, 100)
	row.PostalCode = text("postal_code", in.PostalCode, 20)
	if s := strings.TrimSpace(in.CountryID); s != "" {
		id, err := strconv.ParseInt(s, 10, 64)
		if _, ok := world.CountryByID(id); err != nil || !ok {
			pr.InvalidChoice("country_id")
		}
		row.CountryID = id
	}
	if s := strings.TrimSpace(in.BrandColor); s != "" {
		c, ok := core.ParseColor(s)
		if !ok {
			pr.Add("brand_color", "The brand colour must be a colour written #rrggbb, such as #0f766e.")
		}
		row.BrandColor = c
	}
	var logo []byte
	var logoType string
	if in.LogoNotFile {
		pr.Add("logo", "The logo must be a file.")
	} else if in.Logo != nil {
		var err error
		if logo, logoType, err = checkLogo(in.Logo); err != nil {
			pr.Add("logo", err.Error())
		}
	}
	if err := pr.Err(); err != nil {
		return nil, err
	}
	row.UpdatedAt = models.NewTimestamp(p.now())
	cols := []string{"company_name", "address_line1", "address_line2", "city", "postal_code", "country_id", "brand_color", "updated_at"}
	switch {
	case logo != nil:
		sum := sha256.Sum256(logo)
		row.Logo, row.LogoType, row.LogoHash = logo, logoType, hex.EncodeToString(sum[:16])
		cols = append(cols, "logo", "logo_type", "logo_hash")
	case in.RemoveLogo:
		row.Logo, row.LogoType, row.LogoHash = nil, "", ""
		cols = append(cols, "logo", "logo_type", "logo_hash")
	}
	err := p.db.W.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns(cols),
	}).Create(&row).Error
	if err != nil {
		return nil, fmt.Errorf("profile: save of account %d: %w", accountID, err)
	}
	if err := p.audit.Record(ctx, accountID, core.AuditProfileChanged, "", ""); err != nil {
		return nil, err
	}
	return p.Get(ctx, accountID)
}

// checkLogo reads an uploaded logo: a PNG or a JPEG (by its content, not
// its name) of at most MaxLogoBytes and MaxLogoSide a side, and returns it
// re-encoded with its content type. SVG is refused: it can carry scripts.
// The error's text is the form's message.
func checkLogo(b []byte) ([]byte, string, error) {
	if len(b) == 0 {
		return nil, "", errors.New("The logo file is empty.")
	}
	if len(b) > MaxLogoBytes {
		return nil, "", fmt.Errorf("The logo may be at most %d KB.", MaxLogoBytes>>10)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil || (format != "png" && format != "jpeg") {
		return nil, "", errors.New("The logo must be a PNG or JPEG image.")
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
		return nil, "", fmt.Errorf("The logo may be at most %d pixels wide and high.", MaxLogoSide)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, "", errLogoDamaged
	}
	var out bytes.Buffer
	if format == "png" {
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		err = enc.Encode(&out, img)
	} else {
		err = jpeg.Encode(&out, img, &jpeg.Options{Quality: 90})
	}
	if err != nil {
		return nil, "", errLogoDamaged
	}
	if out.Len() > 2*MaxLogoBytes {
		return nil, "", fmt.Errorf("The logo may be at most %d KB.", MaxLogoBytes>>10)
	}
	return out.Bytes(), "image/" + format, nil
}

// errLogoDamaged refuses a file that claims to be an image but does not decode.
var errLogoDamaged = errors.New("The logo could not be read as an image: the file is damaged.")

// Logo returns the logo named hash (its public address's name) and its
// content type. Errors: ErrNotFound.
func (p *Profiles) Logo(ctx context.Context, hash string) ([]byte, string, error) {
	if len(hash) != 32 || strings.Trim(hash, "0123456789abcdef") != "" {
		return nil, "", core.ErrNotFound
	}
	var row models.OrgProfile
	err := p.db.R.WithContext(ctx).Select("logo", "logo_type").Where("logo_hash = ?", hash).Limit(1).Take(&row).Error
	if err != nil {
		return nil, "", core.NotFoundOr(err, "profile: logo")
	}
	return row.Logo, row.LogoType, nil
}
