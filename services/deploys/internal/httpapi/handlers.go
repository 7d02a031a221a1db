package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/pkg/httperror"
	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/usecase"
)

type handlers struct {
	deploys Deploys
	key     []byte // the gateway's signing key: bodies are checked against their signature
}

// maxJSONBody bounds an image deploy's JSON body.
const maxJSONBody = 64 << 10

// declaredLength is the upload's length as the client declared it: the gateway streams an
// upload chunked (its signature's seal rides in the trailer) and says the length in a header.
// Only an early refusal uses it; the limit itself is enforced on the bytes.
func declaredLength(c *fiber.Ctx) int64 {
	if n := int64(c.Request().Header.ContentLength()); n >= 0 {
		return n
	}
	if n, err := strconv.ParseInt(c.Get(callerid.HeaderDeclaredLength), 10, 64); err == nil && n >= 0 {
		return n
	}
	return -1
}

// create dispatches on the content type: JSON is an image deploy, multipart a static site or
// a source tarball, by the app's kind. A refused upload may leave body bytes unread:
// closeOnError then closes the connection.
func (h handlers) create(c *fiber.Ctx) (err error) {
	ctx := c.UserContext()
	// The app first: an unknown, foreign or deleted app is 404 whatever the request says.
	kind, err := h.deploys.AppKind(ctx, team(c), c.Params("slug"))
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
	switch mediaType {
	case fiber.MIMEApplicationJSON:
		raw, err := io.ReadAll(io.LimitReader(body, maxJSONBody+1))
		if err != nil {
			return err
		}
		in, err := decodeImage(bytes.NewReader(raw))
		if err != nil {
			return err
		}
		d, created, err := h.deploys.CreateImage(ctx, team(c), c.Params("slug"), in)
		if err != nil {
			return err
		}
		status := http.StatusCreated
		if !created {
			status = http.StatusOK
		}
		return c.Status(status).JSON(toView(d))
	case fiber.MIMEMultipartForm:
		if params["boundary"] == "" {
			return fmt.Errorf("%w: multipart without boundary", deploy.ErrInvalidBody)
		}
		d, err := h.deploys.CreateUpload(ctx, team(c), c.Params("slug"), declaredLength(c),
			body, params["boundary"], kind == "service")
		if err != nil {
			return err
		}
		return c.Status(http.StatusCreated).JSON(toView(d))
	}
	return fmt.Errorf("%w: Content-Type must be application/json or multipart/form-data", deploy.ErrInvalidBody)
}

// imageBody is the JSON of an image deploy; pointers tell absent from empty.
type imageBody struct {
	Image        *string         `json:"image"`
	Release      json.RawMessage `json:"release"`
	ForceRestart *bool           `json:"forceRestart"`
	// Processes declares the deploy's process types (name → command); absent or {}: one web.
	Processes map[string]string `json:"processes"`
	// Start is read only to refuse it beside processes.web: both would be the web command.
	Start json.RawMessage `json:"start"`
}

func decodeImage(r io.Reader) (usecase.ImageInput, error) {
	var b imageBody
	dec := json.NewDecoder(io.LimitReader(r, maxJSONBody))
	if err := dec.Decode(&b); err != nil {
		return usecase.ImageInput{}, fmt.Errorf("%w: %v", deploy.ErrInvalidBody, err)
	}
	if b.Image == nil {
		if b.ForceRestart != nil {
			return usecase.ImageInput{}, deploy.ErrForceWithoutImage
		}
		return usecase.ImageInput{}, fmt.Errorf("%w: image is required", deploy.ErrInvalidImage)
	}
	release, err := deploy.ParseRelease(b.Release)
	if err != nil {
		return usecase.ImageInput{}, err
	}
	processes, err := deploy.ParseProcesses(b.Processes, len(b.Start) > 0 && string(b.Start) != "null")
	if err != nil {
		return usecase.ImageInput{}, err
	}
	in := usecase.ImageInput{Image: *b.Image, Release: release, ForceRestart: b.ForceRestart != nil && *b.ForceRestart, Processes: processes}
	if _, err := deploy.ParseImage(in.Image); err != nil {
		return usecase.ImageInput{}, err
	}
	return in, nil
}

func (h handlers) list(c *fiber.Ctx) error {
	limit := usecase.DefaultListLimit
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return &deploy.ParamError{Name: "limit", Reason: "must be an integer"}
		}
		limit = n
	}
	ds, err := h.deploys.List(c.UserContext(), team(c), c.Params("slug"), limit, c.Query("before"))
	if err != nil {
		return err
	}
	return c.JSON(toViews(ds))
}

func (h handlers) get(c *fiber.Ctx) error {
	d, err := h.deploys.Get(c.UserContext(), team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(toView(d))
}

func (h handlers) cancel(c *fiber.Ctx) error {
	d, err := h.deploys.Cancel(c.UserContext(), team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(toView(d))
}

func (h handlers) rollback(c *fiber.Ctx) error {
	d, err := h.deploys.Rollback(c.UserContext(), team(c), c.Params("slug"), c.Params("id"))
	if err != nil {
		return err
	}
	return c.Status(http.StatusCreated).JSON(toView(d))
}
