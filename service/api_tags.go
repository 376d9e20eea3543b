package service

import "herald/service/audience"

// Names of the tags on contacts (service/audience/tags.go).

// TagsInput is the body of contacts/tags/add and contacts/tags/remove.
type TagsInput = audience.TagsInput

// Limits of tags.
const (
	MaxTagLen         = audience.MaxTagLen
	MaxTagsPerContact = audience.MaxTagsPerContact
)

// SplitTags reads tags separated by `;`.
func SplitTags(s string) []string { return audience.SplitTags(s) }
