// Package designs holds the pages of email designs: the gallery of the
// library and of the account's own designs, previews rendered for a
// contact, and the editor (GrapesJS, or the HTML itself).
package designs

import (
	"html"
	"strconv"

	"herald/models"
	"herald/service"
	"herald/views"
)

// The addresses of the templates area.
const (
	GalleryURL = "/templates"
	EditorURL  = "/templates/editor"
	DesignsURL = "/templates/designs"
	BlocksURL  = "/templates/blocks" // saved blocks: POST saves one
)

// BlockURL is a saved block's markup and styles (GET, JSON), which the
// editor's script inserts.
func BlockURL(id int64) string { return BlocksURL + "/" + strconv.FormatInt(id, 10) }

// DeleteBlockURL deletes a saved block (POST).
func DeleteBlockURL(id int64) string { return BlockURL(id) + "/delete" }

// NewFromURL opens the editor on a copy of a library design.
func NewFromURL(templateID int64) string {
	return EditorURL + "?from=" + strconv.FormatInt(templateID, 10)
}

// DesignURL is where a design is saved (POST).
func DesignURL(id int64) string { return DesignsURL + "/" + strconv.FormatInt(id, 10) }

// EditURL is the editor on an own design.
func EditURL(id int64) string { return DesignURL(id) + "/edit" }

// DeleteURL deletes an own design (POST).
func DeleteURL(id int64) string { return DesignURL(id) + "/delete" }

// PreviewURL is the console preview of an own design.
func PreviewURL(id int64) string { return DesignURL(id) + "/preview" }

// LibraryPreviewURL is the console preview of a library design.
func LibraryPreviewURL(id int64) string {
	return GalleryURL + "/library/" + strconv.FormatInt(id, 10) + "/preview"
}

// PublicPreviewURL is the public page of a library design (no login).
func PublicPreviewURL(id int64) string { return "/designs/" + strconv.FormatInt(id, 10) + "/preview" }

// Thumbnail is the address of a library design's preview image.
func Thumbnail(file string) string { return "/static/img/templates/" + file }

// List is a page of the account's own designs.
type List struct {
	Rows  []models.Design
	Query views.ListQuery
	Pager views.Pager
	CSRF  string
}

// Gallery is the templates page.
type Gallery struct {
	Library []models.DesignTemplate
	Own     List
}

// Preview is a design rendered for a chosen contact (or sample values).
type Preview struct {
	Title    string
	URL      string // this page, which the contact form reloads
	EditURL  string // "" when none
	HTML     string // the rendered design
	Search   string
	Contacts []views.Option
	Contact  string // the chosen contact's id, "" for sample values
}

// Editor is the editor page on a design, new (ID 0) or saved.
type Editor struct {
	ID           int64
	Name         string
	TemplateID   int64
	TemplateJSON string
	TemplateHTML string
	Errors       views.Errors
	Other        []string
	CSRF         string
	Tools        Tools
}

// SaveURL is where the editor posts the design.
func (e Editor) SaveURL() string {
	if e.ID == 0 {
		return DesignsURL
	}
	return DesignURL(e.ID)
}

// EditorData is what static/js/editor.js reads from the page (a JSON
// script element: no inline script runs).
type EditorData struct {
	ID           int64           `json:"id"`
	TemplateJSON string          `json:"template_json"`
	TemplateHTML string          `json:"template_html"`
	SaveURL      string          `json:"save_url"`
	MergeTags    []MergeTagGroup `json:"merge_tags"`
	Words        EditorWords     `json:"words"`
}

// Data is the editor's start.
func (e Editor) Data() EditorData {
	return EditorData{ID: e.ID, TemplateJSON: e.TemplateJSON, TemplateHTML: e.TemplateHTML, SaveURL: e.SaveURL(),
		MergeTags: e.Tools.MergeTags, Words: Words()}
}

// Tools are the editor's merge tags and the account's saved blocks, shown
// beside the canvas of a design's editor and of an automation email's.
type Tools struct {
	MergeTags []MergeTagGroup
	Blocks    []models.SavedBlock
	Name      string       // the block name typed, kept after a refused save
	Errors    views.Errors // why a block was not saved
	CSRF      string
}

// MergeTagGroup is a group of the merge-tag picker (an optgroup).
type MergeTagGroup struct {
	Label string     `json:"label"`
	Tags  []MergeTag `json:"tags"`
}

// MergeTag is one choice of the picker: what it shows, the placeholder,
// and the HTML the editor inserts (the placeholder, or a link or image
// made of it; the words in it escaped).
type MergeTag struct {
	Label  string `json:"label"`
	Tag    string `json:"tag"`
	Insert string `json:"insert"`
}

// EditorWords are the sentences static/js/editor.js shows, from the
// console catalogue.
type EditorWords struct {
	Pick        string `json:"pick"`         // the picker's first option
	PickLabel   string `json:"pick_label"`   // the picker's accessible name
	Inserted    string `json:"inserted"`     // {{.Name}}: a merge tag or block was inserted
	ChooseBlock string `json:"choose_block"` // saving a block with none chosen
	BlockFailed string `json:"block_failed"` // a block that could not be read
}

// Words are the editor script's sentences.
func Words() EditorWords {
	return EditorWords{
		Pick:        views.T("editor.tag_pick"),
		PickLabel:   views.T("editor.tag_pick_label"),
		Inserted:    views.T("editor.inserted"),
		ChooseBlock: views.T("editor.choose_block"),
		BlockFailed: views.T("editor.block_failed"),
	}
}

// MergeTagGroups groups the account's merge tags for the picker, in the
// order given, with their labels and what each inserts.
func MergeTagGroups(tags []service.MergeTag) []MergeTagGroup {
	var out []MergeTagGroup
	index := map[string]int{}
	for _, t := range tags {
		i, ok := index[t.Group]
		if !ok {
			i = len(out)
			index[t.Group] = i
			out = append(out, MergeTagGroup{Label: groupLabel(t.Group)})
		}
		label := tagLabel(t)
		placeholder := "((" + t.Name + "))"
		insert := placeholder
		switch t.Kind {
		case service.TagLink:
			insert = `<a href="` + placeholder + `">` + html.EscapeString(label) + `</a>`
		case service.TagImage:
			insert = `<img src="` + placeholder + `" alt="((org_name))" style="max-width:200px;height:auto">`
		}
		out[i].Tags = append(out[i].Tags, MergeTag{Label: label, Tag: placeholder, Insert: insert})
	}
	return out
}

func groupLabel(g string) string {
	switch g {
	case service.TagsContact:
		return views.T("editor.group_contact")
	case service.TagsCustom:
		return views.T("editor.group_custom")
	case service.TagsLinks:
		return views.T("editor.group_links")
	case service.TagsSender:
		return views.T("editor.group_sender")
	case service.TagsOrg:
		return views.T("editor.group_org")
	}
	return g
}

// tagLabel names a merge tag: a custom field by its label, the others
// from the catalogue.
func tagLabel(t service.MergeTag) string {
	if t.Label != "" {
		return t.Label
	}
	switch t.Name {
	case "first_name":
		return views.T("editor.tag_first_name")
	case "last_name":
		return views.T("editor.tag_last_name")
	case "email":
		return views.T("editor.tag_email")
	case "alt_email":
		return views.T("editor.tag_alt_email")
	case "country":
		return views.T("editor.tag_country")
	case "state":
		return views.T("editor.tag_state")
	case "city":
		return views.T("editor.tag_city")
	case "address_line1":
		return views.T("editor.tag_address_line1")
	case "address_line2":
		return views.T("editor.tag_address_line2")
	case "state_province_region":
		return views.T("editor.tag_region")
	case "postal_code":
		return views.T("editor.tag_postal_code")
	case "view_in_browser":
		return views.T("editor.tag_view_in_browser")
	case "unsubscribe_preferences":
		return views.T("editor.tag_unsubscribe")
	case "sender_name":
		return views.T("editor.tag_sender_name")
	case "sender_address":
		return views.T("editor.tag_sender_address")
	case "org_name":
		return views.T("editor.tag_org_name")
	case "org_address":
		return views.T("editor.tag_org_address")
	case "org_logo_url":
		return views.T("editor.tag_org_logo")
	}
	return service.FieldLabel(t.Name)
}
