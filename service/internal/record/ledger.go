package record

// The ledger's SQL vocabulary (message states by name) shared by the areas
// that write the ledger.

import (
	"strings"

	"herald/models"
)

// LedgerSQL writes the ledger states into a statement: {queued},
// {claimed}, {delivered}. States are written as literals, not parameters,
// so that PostgreSQL can match the partial indexes on them.
var LedgerSQL = strings.NewReplacer(
	"{queued}", models.MessageQueued.SQL(),
	"{claimed}", models.MessageClaimed.SQL(),
	"{delivered}", models.MessageDelivered.SQL(),
).Replace
