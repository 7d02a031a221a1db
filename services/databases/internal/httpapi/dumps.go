package httpapi

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/apitime"
	"tori.dev/pkg/callerid"
	"tori.dev/services/databases/internal/database"
)

// dumpJSON is a dump as the contract lists it.
type dumpJSON struct {
	ID        string `json:"id"`
	CreatedAt string `json:"createdAt"`
	SizeBytes int64  `json:"sizeBytes"`
	Status    string `json:"status"`
}

func dumpToJSON(d database.Dump) dumpJSON {
	return dumpJSON{ID: d.ID, CreatedAt: apitime.Format(d.CreatedAt), SizeBytes: d.SizeBytes, Status: string(d.Status)}
}

// listDumps serves GET /api/apps/{slug}/database/dumps, newest first.
func (h *databaseHandler) listDumps(c *fiber.Ctx) error {
	dumps, err := h.dbs.ListDumps(c.UserContext(), callerid.From(c).AccountID, c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	out := make([]dumpJSON, 0, len(dumps))
	for _, d := range dumps {
		out = append(out, dumpToJSON(d))
	}
	return c.JSON(out)
}

// takeDump serves POST /api/apps/{slug}/database/dumps: 202 while the zone dumps.
func (h *databaseHandler) takeDump(c *fiber.Ctx) error {
	d, err := h.dbs.TakeDump(c.UserContext(), callerid.From(c).AccountID, c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(dumpToJSON(d))
}

// download serves GET /api/apps/{slug}/database/dumps/{id}/download: the dump in pg_dump's
// custom format, streamed.
func (h *databaseHandler) download(c *fiber.Ctx) error {
	slug, id := c.Params("slug"), strings.ToLower(c.Params("id"))
	body, size, err := h.dbs.OpenDump(c.UserContext(), callerid.From(c).AccountID, slug, id)
	if err != nil {
		return toHTTP(err)
	}
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+slug+"-"+id+`.dump"`)
	// Fiber closes body once it is sent.
	return c.SendStream(body, int(size))
}
