package httpapi

import (
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
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
	dumps, err := h.dbs.ListDumps(c.UserContext(), accessgate.Team(c), c.Params("slug"))
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
	d, err := h.dbs.TakeDump(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(dumpToJSON(d))
}

// download serves GET /api/apps/{slug}/database/dumps/{id}/download: a 307 to a short-lived
// presigned URL of the dump in its zone's bucket, which streams it (pg_dump's custom format)
// straight from the object store (docs/conventions.md, "Dump objects"). The URL is the
// caller's alone, so nothing may cache the answer.
func (h *databaseHandler) download(c *fiber.Ctx) error {
	slug, id := c.Params("slug"), strings.ToLower(c.Params("id"))
	u, err := h.dbs.DumpURL(c.UserContext(), accessgate.Team(c), slug, id)
	if err != nil {
		return toHTTP(err)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return c.Redirect(u, http.StatusTemporaryRedirect)
}
