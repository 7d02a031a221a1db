package httpapi

import (
	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/services/logs/internal/logs"
	"tori.dev/services/logs/internal/usecase"
)

type logsHandler struct {
	reader *usecase.Reader
}

// get serves GET /api/apps/{slug}/logs.
func (h *logsHandler) get(c *fiber.Ctx) error {
	raw := logs.RawQuery{
		Start:   c.Query("start"),
		End:     c.Query("end"),
		Limit:   c.Query("limit"),
		Cursor:  c.Query("cursor"),
		Process: c.Query("process"),
	}
	page, err := h.reader.Read(c.UserContext(), accessgate.Team(c), c.Params("slug"), raw)
	if err != nil {
		return toHTTP(err)
	}
	// SetBody copies into the response's own pooled buffer, so the encoder's can go back at once.
	if err := encodePage(page, c.Response().SetBody); err != nil {
		return err
	}
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	return nil
}
