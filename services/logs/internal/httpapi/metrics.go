package httpapi

import (
	"encoding/json"

	"github.com/gofiber/fiber/v2"

	"tori.dev/contract/apitime"
	"tori.dev/pkg/accessgate"
	"tori.dev/services/logs/internal/metrics"
	"tori.dev/services/logs/internal/usecase"
)

type metricsHandler struct {
	reader *usecase.MetricsReader
}

// metricsJSON is the API's Metrics object. limit is the memory metric's alone: present (a
// number, or null when unknown) for memory and absent otherwise.
type metricsJSON struct {
	Metric string           `json:"metric"`
	Unit   string           `json:"unit"`
	Step   int              `json:"step"`
	Start  apitime.Time     `json:"start"`
	End    apitime.Time     `json:"end"`
	Series []metrics.Series `json:"series"`
	Limit  json.RawMessage  `json:"limit,omitempty"`
}

// get serves GET /api/apps/{slug}/metrics.
func (h *metricsHandler) get(c *fiber.Ctx) error {
	raw := metrics.RawQuery{
		Metric:  c.Query("metric"),
		Start:   c.Query("start"),
		End:     c.Query("end"),
		Step:    c.Query("step"),
		Process: c.Query("process"),
	}
	res, err := h.reader.Read(c.UserContext(), accessgate.Team(c), c.Params("slug"), raw)
	if err != nil {
		return toHTTP(err)
	}
	out := metricsJSON{Metric: res.Metric, Unit: res.Unit, Step: res.Step,
		Start: apitime.Time(res.Start), End: apitime.Time(res.End), Series: res.Series}
	if res.Metric == "memory" {
		out.Limit = json.RawMessage("null")
		if res.Limit != nil {
			b, _ := json.Marshal(*res.Limit)
			out.Limit = b
		}
	}
	return c.JSON(out)
}
