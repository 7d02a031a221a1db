// Package catalog is the plan catalog: the plans Tori sells, their prices and limits, and the
// terms every price is quoted under. It is data and rules only; nothing here does I/O.
package catalog

// Name names a plan. Names are part of the public contract and of every bus message that
// carries a plan, so they never change.
type Name string

const (
	Nestling Name = "nestling"
	Songbird Name = "songbird"
	Flock    Name = "flock"
)

// Default is the plan every new account starts on.
const Default = Nestling

// Prices are flat prices in euro cents, VAT included for consumers. Cents, not euros, so a
// price like 8.50 never passes through a float on its way to an invoice.
type Prices struct {
	MonthCents int64
	YearCents  int64
}

// For is the price of one period of the given interval.
func (p Prices) For(i Interval) int64 {
	if i == Yearly {
		return p.YearCents
	}
	return p.MonthCents
}

// Limits are the caps a plan holds an account to. Nothing is metered: at a limit the account
// is held there, never charged more.
type Limits struct {
	Apps                int64
	CustomDomains       int64
	ConcurrentDeploys   int64
	UploadBytes         int64
	DatabaseBytes       int64
	DatabaseConnections int64
	BuildMinutes        int64
	// MinScale is how many instances of a service stay up when idle; 0 scales to zero.
	MinScale int64
	// CPU is the ceiling of one service instance, in cores.
	CPU              float64
	LogRetentionDays int64
	// ProcessTypes is how many process types of an app may run at once (quantity above 0).
	ProcessTypes int64
	// InstancesPerProcess caps one process type's quantity.
	InstancesPerProcess int64
	// InstancesTotal caps an app's instances, every type together.
	InstancesTotal int64
	// CronJobs is how many cron jobs an app may have.
	CronJobs int64
	// CronMinIntervalMinutes is the shortest gap a cron schedule may fire at; unlike the
	// others, a bigger number is the tighter limit.
	CronMinIntervalMinutes int64
	// CronTimeoutSeconds is the longest timeout of a cron run, and its default.
	CronTimeoutSeconds int64
	// InstanceMemoryBytes is each service instance's memory ceiling.
	InstanceMemoryBytes int64
	// Members is how many people a team may hold, its pending invitations counted.
	Members int64
	// AuditRetentionDays is how far back a team's audit log may be read.
	AuditRetentionDays int64
	// Previews is how many previews an app may have at once (deploying or ready), and
	// PreviewMaxTTLHours the longest lifetime one may ask for.
	Previews           int64
	PreviewMaxTTLHours int64
	// Drains is how many log drains an app may have.
	Drains int64
	// MetricsRetentionDays is how far back an app's metrics may be read.
	MetricsRetentionDays int64
}

// Plan is one catalog entry.
type Plan struct {
	Name   Name
	Prices Prices
	Limits Limits
}

// Paid reports whether the plan costs anything, i.e. whether it can be bought at checkout.
func (p Plan) Paid() bool { return p.Prices.MonthCents > 0 || p.Prices.YearCents > 0 }

// All returns the catalog, cheapest plan first. The slice is a copy the caller may keep.
func All() []Plan {
	out := make([]Plan, len(plans))
	copy(out, plans)
	return out
}

// Lookup finds a plan by name.
func Lookup(name string) (Plan, error) {
	for _, p := range plans {
		if string(p.Name) == name {
			return p, nil
		}
	}
	return Plan{}, ErrUnknownPlan
}

// Purchasable finds a plan that checkout may sell: a known plan that costs something.
func Purchasable(name string) (Plan, error) {
	p, err := Lookup(name)
	if err != nil {
		return Plan{}, err
	}
	if !p.Paid() {
		return Plan{}, ErrNotPurchasable
	}
	return p, nil
}
