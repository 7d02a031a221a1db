package drains

import (
	"errors"
	"time"
)

// Kind is how a drain delivers.
type Kind string

// The kinds of drain.
const (
	KindHTTPS  Kind = "https"  // NDJSON POSTs signed with the drain's secret
	KindSyslog Kind = "syslog" // RFC 5424 over TLS, octet counted (RFC 6587)
)

// Status is a drain's health as its owner sees it.
type Status string

// The statuses of a drain.
const (
	StatusActive  Status = "active"
	StatusFailing Status = "failing"
)

// FailingAfter is how many batches in a row must fail before a drain shows as failing.
const FailingAfter = 5

// Drain is one drain as stored.
type Drain struct {
	ID             string
	AppID          string
	AccountID      string
	URL            string // whole, as given; Masked for showing
	Kind           Kind
	Secret         string // HTTPS only; never shown after the create
	Status         Status
	CreatedAt      time.Time
	LastDeliveryAt *time.Time
	LastError      *string
	Delivered24h   int64
	Dropped24h     int64
}

// ErrAddressForbidden refuses a target that is, or resolves to, an address no tenant's
// traffic may reach (contract/netrange).
var ErrAddressForbidden = errors.New("drains: the drain's address is not a public one")

// ErrLimitReached refuses a drain past the plan's number per app.
var ErrLimitReached = errors.New("drains: the plan's drains per app are all in use")

// ErrNotFound is a drain the caller's app does not have.
var ErrNotFound = errors.New("drains: drain not found")

// LimitError is ErrLimitReached with the plan's number and name.
type LimitError struct {
	Limit int
	Plan  string
}

func (e *LimitError) Error() string { return ErrLimitReached.Error() }

// Is makes a LimitError match ErrLimitReached.
func (e *LimitError) Is(target error) bool { return target == ErrLimitReached }
