package campaign

import (
	"herald/models"
	"herald/service/core"
	"herald/templates"
)

// Templates answers the design library shipped in the binary (the same
// for every account).
type Templates struct{}

// Library returns the designs in id order; id 1 is the blank custom template.
func (Templates) Library() ([]models.DesignTemplate, error) {
	lib, err := templates.Library()
	if err != nil {
		return nil, err
	}
	out := make([]models.DesignTemplate, len(lib))
	for i, d := range lib {
		out[i] = models.DesignTemplate{ID: d.ID, TemplateName: d.Name, PreviewImage: d.PreviewImage, HTMLCode: d.HTML, IsBlank: d.IsBlank}
	}
	return out, nil
}

// Design returns one design of the library. Errors: ErrNotFound.
func (t Templates) Design(id int64) (*models.DesignTemplate, error) {
	lib, err := t.Library()
	if err != nil {
		return nil, err
	}
	for i := range lib {
		if lib[i].ID == id {
			return &lib[i], nil
		}
	}
	return nil, core.ErrNotFound
}

// SampleValues are the placeholder values of the public previews.
func (Templates) SampleValues() map[string]string { return templates.SampleValues() }
