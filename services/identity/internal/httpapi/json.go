package httpapi

import (
	"bytes"
	"encoding/json"
	"time"
)

// decode reads the JSON body into v. An empty body reads as {}, so routes whose fields are
// optional accept no body at all; anything that is not a JSON object of the right types is
// errInvalidBody, never a 500.
func decode(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != '{' {
		return errInvalidBody
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errInvalidBody
	}
	return nil
}

// jsonTime writes RFC 3339 UTC with milliseconds, as the conventions fix.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Time(t).UTC().Format("2006-01-02T15:04:05.000Z") + `"`), nil
}

// optTime is a nullable jsonTime.
func optTime(t *time.Time) *jsonTime {
	if t == nil {
		return nil
	}
	jt := jsonTime(*t)
	return &jt
}
