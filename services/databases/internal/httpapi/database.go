package httpapi

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/databases/internal/database"
	"tori.dev/services/databases/internal/usecase"
)

type databaseHandler struct {
	dbs *usecase.Databases
}

// databaseJSON is the contract's Database: these five fields and nothing else, never a
// credential.
type databaseJSON struct {
	ID        string  `json:"id"`
	AppID     string  `json:"appId"`
	CreatedAt string  `json:"createdAt"`
	Message   *string `json:"message"`
	Status    string  `json:"status"`
}

func toJSON(d database.Database) databaseJSON {
	out := databaseJSON{ID: d.ID, AppID: d.AppID, CreatedAt: apitime.Format(d.CreatedAt), Status: string(d.Status)}
	if d.Message != "" {
		msg := d.Message
		out.Message = &msg
	}
	return out
}

// create serves POST /api/apps/{slug}/database: 202 while the zone provisions it.
func (h *databaseHandler) create(c *fiber.Ctx) error {
	d, err := h.dbs.Create(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(toJSON(d))
}

// get serves GET /api/apps/{slug}/database.
func (h *databaseHandler) get(c *fiber.Ctx) error {
	d, err := h.dbs.Get(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.JSON(toJSON(d))
}

// delete serves DELETE /api/apps/{slug}/database: 202 deleting until the zone confirms.
func (h *databaseHandler) delete(c *fiber.Ctx) error {
	d, err := h.dbs.Delete(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(toJSON(d))
}
