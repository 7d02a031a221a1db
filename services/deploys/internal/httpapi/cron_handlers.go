package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/cron"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

// Crons is what the cron routes need from the use cases; *usecase.Crons is one.
type Crons interface {
	List(ctx context.Context, accountID, slug string) ([]usecase.JobView, error)
	Get(ctx context.Context, accountID, slug, name string) (usecase.JobView, error)
	Create(ctx context.Context, accountID, slug string, in usecase.JobInput) (usecase.JobView, error)
	Update(ctx context.Context, accountID, slug, name string, in usecase.JobInput) (usecase.JobView, error)
	Delete(ctx context.Context, accountID, slug, name string) error
	RunNow(ctx context.Context, accountID, slug, name string) (cron.Run, error)
	Runs(ctx context.Context, accountID, slug, name string, limit int) ([]cron.Run, error)
}

type cronHandlers struct {
	crons Crons
	key   []byte
}

// cronRoutes adds /api/apps/{slug}/crons.
func cronRoutes(srv *fiber.App, crons Crons, key []byte, gate *accessgate.Gate) {
	h := cronHandlers{crons: crons, key: key}
	g := srv.Group("/api/apps/:slug/crons", guard(key)...)
	g.Get("/", gate.Check, h.list)
	g.Post("/", gate.Check, h.create)
	g.Get("/:name", gate.Check, h.get)
	g.Patch("/:name", gate.Check, h.update)
	g.Delete("/:name", gate.Check, h.delete)
	g.Post("/:name/runs", gate.Check, h.runNow)
	g.Get("/:name/runs", gate.Check, h.runs)
}

func (h cronHandlers) list(c *fiber.Ctx) error {
	vs, err := h.crons.List(c.UserContext(), team(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(toCronJobViews(vs))
}

func (h cronHandlers) get(c *fiber.Ctx) error {
	v, err := h.crons.Get(c.UserContext(), team(c), c.Params("slug"), c.Params("name"))
	if err != nil {
		return err
	}
	return c.JSON(toCronJobView(v))
}

func (h cronHandlers) create(c *fiber.Ctx) error {
	in, err := h.body(c)
	if err != nil {
		return err
	}
	v, err := h.crons.Create(c.UserContext(), team(c), c.Params("slug"), in)
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toCronJobView(v))
}

func (h cronHandlers) update(c *fiber.Ctx) error {
	in, err := h.body(c)
	if err != nil {
		return err
	}
	v, err := h.crons.Update(c.UserContext(), team(c), c.Params("slug"), c.Params("name"), in)
	if err != nil {
		return err
	}
	return c.JSON(toCronJobView(v))
}

func (h cronHandlers) delete(c *fiber.Ctx) error {
	if err := h.crons.Delete(c.UserContext(), team(c), c.Params("slug"), c.Params("name")); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

func (h cronHandlers) runNow(c *fiber.Ctx) error {
	r, err := h.crons.RunNow(c.UserContext(), team(c), c.Params("slug"), c.Params("name"))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toCronRunView(r))
}

func (h cronHandlers) runs(c *fiber.Ctx) error {
	limit := usecase.DefaultCronRunsListed
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return &cron.FieldError{Field: "limit", Reason: "must be an integer"}
		}
		limit = n
	}
	rs, err := h.crons.Runs(c.UserContext(), team(c), c.Params("slug"), c.Params("name"), limit)
	if err != nil {
		return err
	}
	return c.JSON(toCronRunViews(rs))
}

// cronBody is a job's JSON; each member is checked for its type here so a wrong one is
// named in the 400.
type cronBody struct {
	Name              json.RawMessage `json:"name"`
	Schedule          json.RawMessage `json:"schedule"`
	Timezone          json.RawMessage `json:"timezone"`
	Command           json.RawMessage `json:"command"`
	ConcurrencyPolicy json.RawMessage `json:"concurrencyPolicy"`
	TimeoutSeconds    json.RawMessage `json:"timeoutSeconds"`
	Enabled           json.RawMessage `json:"enabled"`
}

func (h cronHandlers) body(c *fiber.Ctx) (usecase.JobInput, error) {
	body := callerid.Body(h.key, c)
	raw, err := io.ReadAll(io.LimitReader(body, maxJSONBody+1))
	if err != nil {
		return usecase.JobInput{}, err
	}
	if body.Mismatched() {
		return usecase.JobInput{}, httperror.Unauthorized
	}
	if len(raw) > maxJSONBody {
		return usecase.JobInput{}, fmt.Errorf("%w: the body is over %d bytes", deploy.ErrInvalidBody, maxJSONBody)
	}
	var b cronBody
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		return usecase.JobInput{}, fmt.Errorf("%w: %v", deploy.ErrInvalidBody, err)
	}
	var in usecase.JobInput
	for _, f := range []struct {
		name string
		raw  json.RawMessage
		dst  any
	}{
		{"name", b.Name, &in.Name}, {"schedule", b.Schedule, &in.Schedule}, {"timezone", b.Timezone, &in.Timezone},
		{"command", b.Command, &in.Command}, {"concurrencyPolicy", b.ConcurrencyPolicy, &in.Policy},
		{"timeoutSeconds", b.TimeoutSeconds, &in.TimeoutSeconds}, {"enabled", b.Enabled, &in.Enabled},
	} {
		if len(f.raw) == 0 {
			continue
		}
		if bytes.Equal(f.raw, []byte("null")) || json.Unmarshal(f.raw, f.dst) != nil {
			return usecase.JobInput{}, &cron.FieldError{Field: f.name, Reason: "has the wrong type"}
		}
	}
	return in, nil
}
