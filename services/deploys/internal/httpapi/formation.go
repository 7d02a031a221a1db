package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/deploy"
)

// formationView is one process type of GET/PATCH /api/apps/{slug}/formation.
type formationView struct {
	Type      string `json:"type"`
	Command   string `json:"command"`
	Quantity  int64  `json:"quantity"`
	Running   int64  `json:"running"`
	UpdatedAt string `json:"updatedAt"`
}

func toFormationViews(f []deploy.FormationEntry) []formationView {
	out := make([]formationView, 0, len(f))
	for _, e := range f {
		out = append(out, formationView{Type: e.Type, Command: e.Command, Quantity: e.Quantity, Running: e.Running,
			UpdatedAt: apitime.Format(e.UpdatedAt)})
	}
	return out
}

func (h handlers) formation(c *fiber.Ctx) error {
	f, err := h.deploys.Formation(c.UserContext(), team(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(toFormationViews(f))
}

// maxQuantity bounds a quantity before any plan sees it, so no arithmetic on it overflows.
const maxQuantity = 1 << 20

// scaleBody is PATCH formation's body: quantities stay raw so a fraction, a string or a
// number too large is told apart from a missing one.
type scaleBody struct {
	Updates []struct {
		Type     *string         `json:"type"`
		Quantity json.RawMessage `json:"quantity"`
	} `json:"updates"`
}

func (h handlers) scale(c *fiber.Ctx) (err error) {
	ctx := c.UserContext()
	body := callerid.Body(h.key, c)
	defer func() {
		if err != nil && body.Mismatched() {
			err = httperror.Unauthorized // not the body the gateway signed
		}
	}()
	raw, err := io.ReadAll(io.LimitReader(body, maxJSONBody+1))
	if err != nil {
		return err
	}
	if len(raw) > maxJSONBody {
		return fmt.Errorf("%w: larger than %d bytes", deploy.ErrInvalidBody, maxJSONBody)
	}
	updates, err := decodeScale(raw)
	if err != nil {
		return err
	}
	f, err := h.deploys.Scale(ctx, team(c), c.Params("slug"), updates)
	if err != nil {
		return err
	}
	return c.Status(http.StatusOK).JSON(toFormationViews(f))
}

func decodeScale(raw []byte) ([]deploy.ScaleUpdate, error) {
	var b scaleBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&b); err != nil {
		return nil, fmt.Errorf("%w: %v", deploy.ErrInvalidBody, err)
	}
	out := make([]deploy.ScaleUpdate, 0, len(b.Updates))
	for i, u := range b.Updates {
		if u.Type == nil || *u.Type == "" {
			return nil, &deploy.ParamError{Name: fmt.Sprintf("updates[%d].type", i), Reason: "is required"}
		}
		q, err := strconv.ParseInt(string(u.Quantity), 10, 64)
		if err != nil || q < 0 || q > maxQuantity {
			return nil, &deploy.ParamError{Name: fmt.Sprintf("updates[%d].quantity", i),
				Reason: fmt.Sprintf("must be an integer from 0 to %d", maxQuantity)}
		}
		out = append(out, deploy.ScaleUpdate{Type: *u.Type, Quantity: q})
	}
	return out, nil
}
