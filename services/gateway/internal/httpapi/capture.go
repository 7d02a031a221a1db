package httpapi

import (
	"net/http"
	"sync"
)

// capture keeps a forwarded answer as it passes: its status, content type and body up to max
// bytes, and past that only the fact that it was larger. The observers that keep answers
// (the idempotency keeper, the account copy's keeper) embed it for proxy.Observer's Response
// and ResponseBody.
type capture struct {
	max int

	lock        sync.Mutex
	status      int
	contentType string
	body        []byte
	tooLarge    bool
}

func (c *capture) Response(status int, h http.Header) {
	c.lock.Lock()
	c.status, c.contentType = status, h.Get("Content-Type")
	c.lock.Unlock()
}

func (c *capture) ResponseBody(p []byte) {
	c.lock.Lock()
	defer c.lock.Unlock()
	if c.tooLarge {
		return
	}
	if len(c.body)+len(p) > c.max {
		c.tooLarge, c.body = true, nil
		return
	}
	c.body = append(c.body, p...)
}

// answer is what was kept so far.
func (c *capture) answer() (status int, contentType string, body []byte, tooLarge bool) {
	c.lock.Lock()
	defer c.lock.Unlock()
	return c.status, c.contentType, c.body, c.tooLarge
}
