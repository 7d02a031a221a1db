package auth

import "time"

// EndedKept is how long magic links, grants, authorization codes and sessions stay after
// they expire or are revoked: a late poll still gets the precise answer (expired_token,
// access_denied) rather than an unknown-code one.
const EndedKept = 24 * time.Hour
