// Package templates holds herald's library of email designs: the blank
// custom template (id 1) and the ready-made responsive designs that the
// spec's get-design/template lists. Each design is a complete HTML email
// (table layout, inline CSS, no external resources) written with the
// ((name)) placeholders of dynamic content; its thumbnail lives in
// static/img/templates under the design's PreviewImage name and is made by
// `go run ./templates/thumbs/main.go`.
package templates

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"
)

//go:embed library/*.html library/library.json
var files embed.FS

// Design is one design of the library.
type Design struct {
	ID           int64
	Name         string // the spec's template_name
	File         string // file name under library/
	PreviewImage string // file name under static/img/templates/
	IsBlank      int    // 1 for the blank custom template, 0 otherwise
	HTML         string // the design, placeholders unrendered
}

// entry is one element of library/library.json.
type entry struct {
	ID           int64  `json:"id"`
	Name         string `json:"template_name"`
	File         string `json:"file"`
	PreviewImage string `json:"preview_image"`
	IsBlank      int    `json:"is_blank"`
}

var load = sync.OnceValues(func() ([]Design, error) {
	raw, err := files.ReadFile("library/library.json")
	if err != nil {
		return nil, err
	}
	var entries []entry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("templates: library.json: %w", err)
	}
	designs := make([]Design, 0, len(entries))
	for i, e := range entries {
		if e.ID != int64(i+1) {
			return nil, fmt.Errorf("templates: library.json: entry %d has id %d, want %d", i, e.ID, i+1)
		}
		if e.IsBlank != 0 && e.IsBlank != 1 {
			return nil, fmt.Errorf("templates: design %d: is_blank %d is not 0 or 1", e.ID, e.IsBlank)
		}
		html, err := files.ReadFile(path.Join("library", e.File))
		if err != nil {
			return nil, fmt.Errorf("templates: design %d: %w", e.ID, err)
		}
		designs = append(designs, Design{
			ID:           e.ID,
			Name:         e.Name,
			File:         e.File,
			PreviewImage: e.PreviewImage,
			IsBlank:      e.IsBlank,
			HTML:         string(html),
		})
	}
	if len(designs) == 0 || designs[0].IsBlank != 1 {
		return nil, fmt.Errorf("templates: library.json: design 1 must be the blank custom template")
	}
	return designs, nil
})

// Library returns every design in id order, ids 1, 2, 3 and so on, design 1
// being the blank custom template. The slice is the caller's own. It fails
// only if the embedded library is malformed, which the package's tests rule
// out.
func Library() ([]Design, error) {
	designs, err := load()
	return slices.Clone(designs), err
}

// sample holds what previews and thumbnails show for each placeholder.
var sample = map[string]string{
	"first_name":              "Alex",
	"last_name":               "Morgan",
	"email":                   "alex.morgan@example.com",
	"alt_email":               "alex@example.org",
	"country":                 "United Kingdom",
	"state":                   "England",
	"city":                    "Bristol",
	"address_line1":           "4 Harbour Walk",
	"address_line2":           "",
	"state_province_region":   "England",
	"postal_code":             "BS1 5TY",
	"sender_name":             "Northwind Studio",
	"sender_address":          "12 Quay Street, Bristol BS1 4RN, United Kingdom",
	"unsubscribe_preferences": "https://herald.example.com/unsubscribe/sample",
	"view_in_browser":         "https://herald.example.com/view/sample",
}

// SampleValues returns placeholder values for showing a design to someone
// who is not a real recipient (previews, thumbnails): a contact's fields and
// the sender values, keyed by placeholder name. Any other placeholder, such
// as an account's custom field, has no sample and renders empty, as in a
// real send. The map is the caller's own.
func SampleValues() map[string]string {
	return maps.Clone(sample)
}
