package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"

	goi18n "github.com/nicksnyder/go-i18n/v2/i18n"
	"golang.org/x/text/message"
)

// The console's words live in their own catalogue, console/en.json, in the
// same go-i18n JSON format as the recipients' catalogues: whole sentences
// with {{.Placeholders}}, and plural messages with one text per CLDR plural
// form. The console speaks English only for now, so the catalogue is not
// held to the ten languages of locales/; a translation is one more file
// console/<tag>.json with the same ids.
//
//go:embed console/*.json
var consoleFiles embed.FS

var console *Locale

func init() {
	b := goi18n.NewBundle(Source)
	if err := loadInto(b, consoleFiles, "console/*.json"); err != nil {
		panic("i18n: console: " + err.Error())
	}
	console = &Locale{tag: Source, loc: goi18n.NewLocalizer(b, Source.String()), printer: message.NewPrinter(Source)}
}

// loadInto reads every catalogue of fsys matching glob into b.
func loadInto(b *goi18n.Bundle, fsys fs.FS, glob string) error {
	b.RegisterUnmarshalFunc("json", json.Unmarshal)
	names, err := fs.Glob(fsys, glob)
	if err != nil {
		return err
	}
	for _, name := range names {
		if _, err := b.LoadMessageFileFS(fsys, name); err != nil {
			return fmt.Errorf("catalogue %s: %w", name, err)
		}
	}
	return nil
}

// Console is the console's locale: its messages come from console/en.json
// and its numbers are written the English way (1,234).
func Console() *Locale { return console }

// ConsoleCatalogue is the console's English catalogue as id → plural form
// (or "other" for a plain message) → text, for the checks of the tests.
func ConsoleCatalogue() (map[string]map[string]string, error) {
	return readCatalogue(consoleFiles, "console/en.json")
}
