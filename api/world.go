package api

import (
	"bufio"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"herald/world"
)

// countryStateCity answers the shipped world data, narrowed by the optional
// country_id and state_id. The whole answer (about 11 MB without
// narrowing) is streamed from the in-memory lists without building it.
func (a *API) countryStateCity(c *fiber.Ctx) error {
	countryID, _ := strconv.ParseInt(c.Query("country_id"), 10, 64)
	stateID, _ := strconv.ParseInt(c.Query("state_id"), 10, 64)
	countryID, stateID = max(countryID, 0), max(stateID, 0) // malformed narrowing is ignored
	if stateID > 0 && countryID == 0 {
		if s, ok := world.StateByID(stateID); ok {
			countryID = s.CountryID
		}
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Status(fiber.StatusOK)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		buf := make([]byte, 0, 64<<10)
		buf = append(buf, `{"status":"success","message":{"countries":`...)
		buf = world.AppendCountriesJSON(buf)
		buf = append(buf, `,"states":`...)
		buf = world.AppendStatesJSON(buf, countryID)
		buf = append(buf, `,"cities":[`...)
		first := true
		for _, city := range world.Cities(countryID, stateID) {
			if !first {
				buf = append(buf, ',')
			}
			first = false
			buf = world.AppendCityJSON(buf, &city)
			if len(buf) > 60<<10 {
				if _, err := w.Write(buf); err != nil {
					return
				}
				buf = buf[:0]
			}
		}
		buf = append(buf, "]}}"...)
		_, _ = w.Write(buf)
	})
	return nil
}
