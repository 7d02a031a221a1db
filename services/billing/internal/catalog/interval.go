package catalog

// Interval is how often a subscription is charged.
type Interval string

const (
	Monthly Interval = "month"
	Yearly  Interval = "year"
)

// ParseInterval accepts the interval names of the checkout request.
func ParseInterval(s string) (Interval, error) {
	switch Interval(s) {
	case Monthly, Yearly:
		return Interval(s), nil
	}
	return "", ErrUnknownInterval
}
