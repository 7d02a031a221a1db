package httpapi

import (
	"bytes"
	"encoding/json"
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
