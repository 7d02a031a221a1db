package billinghold

// Notice is a mail about a hold to the account's owner: billing decides when one is due and
// names it in billingv1.AccountHoldNotice; identity writes and sends it.
type Notice string

const (
	// NoticePaymentFailed goes out on day 0.
	NoticePaymentFailed Notice = "payment_failed"
	// NoticeDeploysRefusedSoon goes out on day 6, before new deploys are refused.
	NoticeDeploysRefusedSoon Notice = "deploys_refused_soon"
	// NoticeServingStopsSoon goes out on day 13, before serving stops.
	NoticeServingStopsSoon Notice = "serving_stops_soon"
)

// Notices are every notice, in the order a hold calls for them.
var Notices = []Notice{NoticePaymentFailed, NoticeDeploysRefusedSoon, NoticeServingStopsSoon}

// Known reports whether n is one of the notices.
func (n Notice) Known() bool {
	for _, k := range Notices {
		if n == k {
			return true
		}
	}
	return false
}
