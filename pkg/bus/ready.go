package bus

import (
	"context"
	"errors"
)

// ErrDisconnected is Ready's answer while the broker connection is down.
var ErrDisconnected = errors.New("bus: not connected to the broker")

// Ready answers nil while the connection to the broker is up, ErrDisconnected while it is
// down (lost and being redialled): the probe /readyz asks through health.Identity.Check. A
// broker that stops or restarts closes the socket, which the connection notices at once.
func (c *Conn) Ready(context.Context) error {
	if c.Connected() {
		return nil
	}
	return ErrDisconnected
}
