package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"herald/delivery"
)

// feedbackLine is one line of `herald feedback parse`: exactly these keys
// (decisions.md 9).
type feedbackLine struct {
	File       string `json:"file"`
	Recipient  string `json:"recipient"`
	Kind       string `json:"kind"`
	Reason     string `json:"reason"`
	Status     string `json:"status"`
	Diagnostic string `json:"diagnostic"`
}

// feedbackCmd runs `herald feedback parse FILE…`: each file is read as one
// mail, as the inbound server and the bounce mailbox read it, and every
// report found in it is printed as a JSON line. It opens no database: an
// operator asks what herald would make of a bounce. A file that cannot be
// read is an error after the others were printed.
func feedbackCmd(args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "parse" {
		return errors.New(usage)
	}
	files := args[1:]
	if len(files) == 0 {
		return fmt.Errorf("feedback parse: name at least one mail file\n%s", usage)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	var failed []error
	for _, name := range files {
		raw, err := readMailFile(name)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		reports, err := delivery.ParseReports(raw, nil, nil)
		if err != nil {
			failed = append(failed, fmt.Errorf("%s: %w", name, err))
			continue
		}
		for _, r := range reports {
			if r.Kind == delivery.ReportDelivered {
				continue
			}
			if err := enc.Encode(feedbackLine{File: name, Recipient: r.Recipient, Kind: r.Kind.String(),
				Reason: r.Reason, Status: r.Status, Diagnostic: r.Diagnostic}); err != nil {
				return err
			}
		}
	}
	return errors.Join(failed...)
}

// readMailFile reads one mail file, refusing one over the size the
// inbound server accepts.
func readMailFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, delivery.MaxReportSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(raw) > delivery.MaxReportSize {
		return nil, fmt.Errorf("%s: %w", name, delivery.ErrReportTooLarge)
	}
	return raw, nil
}
