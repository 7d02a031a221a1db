package billinghold

import (
	"time"

	"tori.dev/contract/apitime"
)

// View is a hold in the API's JSON: the `hold` of GET /api/billing, and the `hold` a 402
// billing_hold of deploys carries, in one shape.
type View struct {
	Since              apitime.Time `json:"since"`
	Stage              Stage        `json:"stage"`
	DeploysRefusedFrom apitime.Time `json:"deploysRefusedFrom"`
	ServingStopsFrom   apitime.Time `json:"servingStopsFrom"`
	ReclaimableFrom    apitime.Time `json:"reclaimableFrom"`
}

// ViewAt is h's view at now.
func (h Hold) ViewAt(now time.Time) View { return h.View(h.StageAt(now)) }

// View is h's view at stage (the stage its caller already judged, so one answer names one).
func (h Hold) View(stage Stage) View {
	return View{Since: apitime.Time(h.Since), Stage: stage, DeploysRefusedFrom: apitime.Time(h.DeploysRefusedFrom),
		ServingStopsFrom: apitime.Time(h.ServingStopsFrom), ReclaimableFrom: apitime.Time(h.ReclaimableFrom)}
}
