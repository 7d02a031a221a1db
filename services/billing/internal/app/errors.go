package app

import "errors"

// ErrUnavailable means paid plans are not enabled: checkout and the billing portal refuse.
var ErrUnavailable = errors.New("billing: paid plans are not enabled")
