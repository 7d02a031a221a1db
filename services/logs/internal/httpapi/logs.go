package httpapi

import (
	"sync"

	"github.com/gofiber/fiber/v2"

	"tori.dev/pkg/callerid"
	"tori.dev/services/logs/internal/app"
	"tori.dev/services/logs/internal/logs"
)

type logsHandler struct {
	reader *app.Reader
}

// pageBuffers hold encoded pages between requests: a full page is about 120 kB, which
// would otherwise be a fresh large allocation (and garbage) per read.
var pageBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledPage keeps an outsized page's buffer (long messages) from being held forever.
const maxPooledPage = 1 << 20

// get serves GET /api/apps/{slug}/logs.
func (h *logsHandler) get(c *fiber.Ctx) error {
	raw := logs.RawQuery{
		Start:  c.Query("start"),
		End:    c.Query("end"),
		Limit:  c.Query("limit"),
		Cursor: c.Query("cursor"),
	}
	page, err := h.reader.Read(c.UserContext(), callerid.From(c).AccountID, c.Params("slug"), raw)
	if err != nil {
		return toHTTP(err)
	}
	buf := pageBuffers.Get().(*[]byte)
	*buf = appendPage((*buf)[:0], page)
	// SetBody copies into the response's own pooled buffer, so ours can go back at once.
	c.Response().SetBody(*buf)
	c.Response().Header.SetContentType(fiber.MIMEApplicationJSON)
	if cap(*buf) <= maxPooledPage {
		pageBuffers.Put(buf)
	}
	return nil
}
