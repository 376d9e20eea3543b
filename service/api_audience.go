package service

// Names of audience kept under their old names for the packages that use them.

import (
	"herald/service/audience"
	"io"
	"os"
	"time"
)

type (
	ContactFilter     = audience.ContactFilter
	ContactInput      = audience.ContactInput
	Engagement        = audience.Engagement
	ExplainReason     = audience.ExplainReason
	Explanation       = audience.Explanation
	ExportInput       = audience.ExportInput
	FieldInput        = audience.FieldInput
	GroupInput        = audience.GroupInput
	ImportColumn      = audience.ImportColumn
	ImportFile        = audience.ImportFile
	MergeTag          = audience.MergeTag
	RecipientsInput   = audience.RecipientsInput
	SegmentEmailInput = audience.SegmentEmailInput
	SegmentInput      = audience.SegmentInput
	PrivacyExport     = audience.PrivacyExport
)

// The groups and kinds of the editor's merge tags.
const (
	TagsContact = audience.TagsContact
	TagsCustom  = audience.TagsCustom
	TagsLinks   = audience.TagsLinks
	TagsSender  = audience.TagsSender
	TagsOrg     = audience.TagsOrg
	TagText     = audience.TagText
	TagLink     = audience.TagLink
	TagImage    = audience.TagImage
)

const (
	EngagementField    = audience.EngagementField
	ExportContactsType = audience.ExportContactsType
	ExportRunning      = audience.ExportRunning
	MaxActiveExports   = audience.MaxActiveExports
	MaxConditions      = audience.MaxConditions
	MaxSpool           = audience.MaxSpool
	MaxUploads         = audience.MaxUploads
	NewColumn          = audience.NewColumn
	ReasonByHand       = audience.ReasonByHand
	ReasonConditions   = audience.ReasonConditions
	ReasonContactType  = audience.ReasonContactType
	ReasonNoContact    = audience.ReasonNoContact
	SkipColumn         = audience.SkipColumn
	UploadGrace        = audience.UploadGrace
	MsgErased          = audience.MsgErased
	UploadMinRate      = audience.UploadMinRate
)

var (
	EngagementLevels   = audience.EngagementLevels
	ErrTooManyExports  = audience.ErrTooManyExports
	ErrTooManyUploads  = audience.ErrTooManyUploads
	FieldTypes         = audience.FieldTypes
	ReservedFieldNames = audience.ReservedFieldNames
)

// FieldLabel is audience.FieldLabel.
func FieldLabel(name string) string {
	return audience.FieldLabel(name)
}

// LimitReader is audience.LimitReader.
func LimitReader(r io.Reader, n int64, tooLarge error) io.Reader {
	return audience.LimitReader(r, n, tooLarge)
}

// NormaliseDateTime is audience.NormaliseDateTime.
func NormaliseDateTime(v string) (string, bool) {
	return audience.NormaliseDateTime(v)
}

// OperatorsFor is audience.OperatorsFor.
func OperatorsFor(fieldType string) []string {
	return audience.OperatorsFor(fieldType)
}

// PacedReader is audience.PacedReader.
func PacedReader(r io.Reader, setDeadline func(time.Time) error) io.Reader {
	return audience.PacedReader(r, setDeadline)
}

// Spool is audience.Spool.
func Spool() (*os.File, error) {
	return audience.Spool()
}

// ImportBasis reads the basis chosen on the console's import form (see
// audience.ImportBasis).
func ImportBasis(choice, other string) (string, error) { return audience.ImportBasis(choice, other) }

// ImportBasisOther is the import form's choice of the importer's own words.
const ImportBasisOther = audience.ImportBasisOther
