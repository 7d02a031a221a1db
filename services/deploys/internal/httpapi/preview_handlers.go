package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/accessgate"
	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
	"tori.dev/services/deploys/internal/upload"
	"tori.dev/services/deploys/internal/usecase"
)

// Previews is what the preview routes need from the use cases; *usecase.Service is one.
type Previews interface {
	CreatePreviewImage(ctx context.Context, accountID, slug string, img usecase.ImageInput, in preview.Input) (*preview.Preview, bool, error)
	CreatePreviewUpload(ctx context.Context, accountID, slug string, contentLength int64, body io.Reader, boundary string,
		service bool, in *preview.Input, fields upload.Fields) (*preview.Preview, bool, error)
	Previews(ctx context.Context, accountID, slug string) ([]*preview.Preview, error)
	Preview(ctx context.Context, accountID, slug, ref string) (*preview.Preview, error)
	ExtendPreview(ctx context.Context, accountID, slug, ref string, ttlSeconds int64) (*preview.Preview, error)
	DeletePreview(ctx context.Context, accountID, slug, ref string) error
	PromotePreview(ctx context.Context, accountID, slug, ref string) (*deploy.Deploy, error)
	AppKind(ctx context.Context, accountID, slug string) (string, error)
}

type previewHandlers struct {
	previews Previews
	urls     previewURLs
	key      []byte
}

// previewRoutes serves /api/apps/{slug}/previews; {id} is a preview's id or, failing that,
// its name.
func previewRoutes(srv *fiber.App, p Previews, domain string, key []byte, gate *accessgate.Gate) {
	h := previewHandlers{previews: p, urls: previewURLs{domain: domain}, key: key}
	api := srv.Group("/api/apps/:slug/previews", guard(key)...)
	api.Post("/", gate.Check, h.create)
	api.Get("/", gate.Check, h.list)
	api.Get("/:id", gate.Check, h.get)
	api.Patch("/:id", gate.Check, h.patch)
	api.Delete("/:id", gate.Check, h.remove)
	api.Post("/:id/promote", gate.Check, h.promote)
}

// create takes what a deploy takes plus the preview's members: JSON for an image, multipart
// for a static site or a source tarball. 201 for a new preview, 200 for one replaced in place.
func (h previewHandlers) create(c *fiber.Ctx) (err error) {
	ctx := c.UserContext()
	kind, err := h.previews.AppKind(ctx, team(c), c.Params("slug"))
	if err != nil {
		return err
	}
	mediaType, params, err := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	if err != nil {
		return fmt.Errorf("%w: unreadable Content-Type", deploy.ErrInvalidBody)
	}
	body := callerid.Body(h.key, c)
	defer func() {
		if err != nil && body.Mismatched() {
			err = httperror.Unauthorized // not the body the gateway signed: nothing was kept
		}
	}()
	var p *preview.Preview
	var created bool
	switch mediaType {
	case fiber.MIMEApplicationJSON:
		raw, err := readJSON(body)
		if err != nil {
			return err
		}
		in, err := decodePreviewJSON(raw)
		if err != nil {
			return err
		}
		img, err := decodeImage(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		if p, created, err = h.previews.CreatePreviewImage(ctx, team(c), c.Params("slug"), img, in); err != nil {
			return err
		}
	case fiber.MIMEMultipartForm:
		if params["boundary"] == "" {
			return fmt.Errorf("%w: multipart without boundary", deploy.ErrInvalidBody)
		}
		var in preview.Input
		p, created, err = h.previews.CreatePreviewUpload(ctx, team(c), c.Params("slug"), declaredLength(c),
			body, params["boundary"], kind == "service", &in, previewFields(&in))
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: Content-Type must be application/json or multipart/form-data", deploy.ErrInvalidBody)
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	return c.Status(status).JSON(h.urls.view(c.Params("slug"), p))
}

func (h previewHandlers) list(c *fiber.Ctx) error {
	ps, err := h.previews.Previews(c.UserContext(), team(c), c.Params("slug"))
	if err != nil {
		return err
	}
	return c.JSON(h.urls.views(c.Params("slug"), ps))
}

func (h previewHandlers) get(c *fiber.Ctx) error {
	p, err := h.previews.Preview(c.UserContext(), team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(h.urls.view(c.Params("slug"), p))
}

// patch sets a new time to live: {"ttlSeconds": n}, from now, capped by the plan.
func (h previewHandlers) patch(c *fiber.Ctx) (err error) {
	body := callerid.Body(h.key, c)
	defer func() {
		if err != nil && body.Mismatched() {
			err = httperror.Unauthorized
		}
	}()
	raw, err := readJSON(body)
	if err != nil {
		return err
	}
	ttl, err := decodePatch(raw)
	if err != nil {
		return err
	}
	p, err := h.previews.ExtendPreview(c.UserContext(), team(c), c.Params("slug"), c.Params("id"), ttl)
	if err != nil {
		return err
	}
	return c.JSON(h.urls.view(c.Params("slug"), p))
}

func (h previewHandlers) remove(c *fiber.Ctx) error {
	if err := h.previews.DeletePreview(c.UserContext(), team(c), c.Params("slug"), c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(http.StatusNoContent)
}

// promote answers the deploy it starts, as POST /deploys does.
func (h previewHandlers) promote(c *fiber.Ctx) error {
	d, err := h.previews.PromotePreview(c.UserContext(), team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toView(d))
}

// readJSON reads a JSON body within maxJSONBody.
func readJSON(body io.Reader) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(body, maxJSONBody+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxJSONBody {
		return nil, fmt.Errorf("%w: larger than %d bytes", deploy.ErrInvalidBody, maxJSONBody)
	}
	return raw, nil
}
