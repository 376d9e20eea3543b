// Package designs holds the pages of email designs: the gallery of the
// library and of the account's own designs, previews rendered for a
// contact, and the editor (GrapesJS, or the HTML itself).
package designs

import (
	"strconv"

	"herald/models"
	"herald/views"
)

// The addresses of the templates area.
const (
	GalleryURL = "/templates"
	EditorURL  = "/templates/editor"
	DesignsURL = "/templates/designs"
)

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
	ID           int64  `json:"id"`
	TemplateJSON string `json:"template_json"`
	TemplateHTML string `json:"template_html"`
	SaveURL      string `json:"save_url"`
}

// Data is the editor's start.
func (e Editor) Data() EditorData {
	return EditorData{ID: e.ID, TemplateJSON: e.TemplateJSON, TemplateHTML: e.TemplateHTML, SaveURL: e.SaveURL()}
}
