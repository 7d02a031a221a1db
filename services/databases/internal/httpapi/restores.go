package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/httperror"
	"tori.dev/services/databases/internal/database"
)

// restoreJSON is a restore as the contract shows it.
type restoreJSON struct {
	ID        string `json:"id"`
	DumpID    string `json:"dumpId"`
	Status    string `json:"status"`
	CreatedAt string `json:"createdAt"`
}

func restoreToJSON(r database.Restore) restoreJSON {
	return restoreJSON{ID: r.ID, DumpID: r.DumpID, Status: string(r.Status), CreatedAt: apitime.Format(r.CreatedAt)}
}

// createRestore serves POST /api/apps/{slug}/database/restores {dumpId}: 202 restoring.
func (h *databaseHandler) createRestore(c *fiber.Ctx) error {
	var body struct {
		DumpID string `json:"dumpId"`
	}
	if err := json.Unmarshal(c.Body(), &body); err != nil || body.DumpID == "" {
		return httperror.New(http.StatusBadRequest, "invalid_body").WithMessage("the body must be JSON with dumpId")
	}
	r, err := h.dbs.CreateRestore(c.UserContext(), accessgate.Team(c), c.Params("slug"), strings.ToLower(body.DumpID))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(restoreToJSON(r))
}

// listRestores serves GET /api/apps/{slug}/database/restores.
func (h *databaseHandler) listRestores(c *fiber.Ctx) error {
	rs, err := h.dbs.ListRestores(c.UserContext(), accessgate.Team(c), c.Params("slug"))
	if err != nil {
		return toHTTP(err)
	}
	out := make([]restoreJSON, 0, len(rs))
	for _, r := range rs {
		out = append(out, restoreToJSON(r))
	}
	return c.JSON(out)
}

// deleteRestore serves DELETE /api/apps/{slug}/database/restores/{id}: 202 deleting.
func (h *databaseHandler) deleteRestore(c *fiber.Ctx) error {
	r, err := h.dbs.DeleteRestore(c.UserContext(), accessgate.Team(c), c.Params("slug"), strings.ToLower(c.Params("id")))
	if err != nil {
		return toHTTP(err)
	}
	return c.Status(http.StatusAccepted).JSON(restoreToJSON(r))
}
