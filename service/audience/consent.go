package audience

import (
	"strings"

	"herald/models"
	"herald/service/core"
)

// ImportBasisOther is the console import form's choice whose basis is
// the importer's own words.
const ImportBasisOther = "other"

// maxBasis bounds the importer's own words of a basis.
const maxBasis = 255

// ImportBasis reads the basis the console's import form asks for: one
// of the offered choices (models.ConsentBasisSignedUp, …Customers), or
// ImportBasisOther with the importer's words in other. It returns what
// the import's consent records. Errors: validation (key basis, or
// basis_other for missing or bad words).
func ImportBasis(choice, other string) (string, error) {
	p := core.Problems{}
	switch choice = strings.TrimSpace(choice); choice {
	case models.ConsentBasisSignedUp, models.ConsentBasisCustomers:
		return choice, nil
	case ImportBasisOther:
		other = strings.TrimSpace(other)
		if other == "" {
			p.AddReason("basis_other", core.ReasonRequired, "Say where these contacts come from.")
		} else {
			p.Text("basis_other", other, maxBasis)
			p.SingleLine("basis_other", other)
		}
		if err := p.Err(); err != nil {
			return "", err
		}
		if other == models.ConsentAPI || other == models.ConsentBasisSignedUp || other == models.ConsentBasisCustomers {
			// The words of a code stand for themselves, not for the code.
			other = `"` + other + `"`
		}
		return other, nil
	case "":
		p.AddReason("basis", core.ReasonRequired, "Choose where these contacts come from.")
	default:
		p.InvalidChoice("basis")
	}
	return "", p.Err()
}
