package commands

import (
	"fmt"
	"math"
	"strings"
)

// sparkRunes are a sparkline's eight heights, lowest first.
var sparkRunes = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values as one rune each, scaled from their smallest to their largest; a
// missing value (null: no requests for a latency, no sample) is a space. Values all equal
// draw at the lowest height when zero and mid-height otherwise, so a flat line still says
// whether anything happened.
func Sparkline(values []*float64) string {
	lo, hi, any := spanOf(values)
	var b strings.Builder
	for _, v := range values {
		switch {
		case v == nil:
			b.WriteRune(' ')
		case !any || hi == lo:
			if *v == 0 {
				b.WriteRune(sparkRunes[0])
			} else {
				b.WriteRune(sparkRunes[3])
			}
		default:
			i := int(math.Round((*v - lo) / (hi - lo) * float64(len(sparkRunes)-1)))
			b.WriteRune(sparkRunes[i])
		}
	}
	return b.String()
}

// spanOf is the smallest and largest of the values present, and whether any is.
func spanOf(values []*float64) (lo, hi float64, any bool) {
	for _, v := range values {
		if v == nil || math.IsNaN(*v) {
			continue
		}
		if !any || *v < lo {
			lo = *v
		}
		if !any || *v > hi {
			hi = *v
		}
		any = true
	}
	return lo, hi, any
}

// formatValue writes a metric's value in its unit: bytes in KiB/MiB/GiB, cores and
// milliseconds with the precision they need, counts whole.
func formatValue(v float64, unit string) string {
	switch unit {
	case "bytes":
		const k = 1024.0
		switch {
		case v >= k*k*k:
			return fmt.Sprintf("%.1f GiB", v/(k*k*k))
		case v >= k*k:
			return fmt.Sprintf("%.1f MiB", v/(k*k))
		case v >= k:
			return fmt.Sprintf("%.1f KiB", v/k)
		}
		return fmt.Sprintf("%.0f B", v)
	case "ms":
		if v < 10 {
			return fmt.Sprintf("%.2f ms", v)
		}
		return fmt.Sprintf("%.0f ms", v)
	case "cores":
		return fmt.Sprintf("%.3f cores", v)
	case "requests", "instances":
		if v == math.Trunc(v) {
			return fmt.Sprintf("%.0f %s", v, unit)
		}
		return fmt.Sprintf("%.1f %s", v, unit)
	}
	return strings.TrimSpace(fmt.Sprintf("%g %s", v, unit))
}
