package logs

import "time"

// ParseTimestamp reads a timestamp parameter as the log route does (RFC 3339, a '+' decoded
// as a space read back as '+'), for the service's other routes (metrics).
func ParseTimestamp(s string) (time.Time, error) { return parseTimestamp(s) }

// ParseProcessFilter reads a process parameter as the log route does: with a dot one process
// exactly, without one its type. Its error is the log route's InvalidParameterError.
func ParseProcessFilter(s string) (ProcessFilter, error) { return parseProcessFilter(s) }
