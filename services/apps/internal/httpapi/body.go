package httpapi

import (
	"bytes"
	"encoding/json"
)

// object decodes a JSON object body into its raw members. An empty body (or JSON null) is an
// empty object when allowEmpty (POST /api/apps takes no body at all); anything else that is
// not an object is errInvalidJSON, never a 500.
func object(body []byte, allowEmpty bool) (map[string]json.RawMessage, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		if allowEmpty {
			return map[string]json.RawMessage{}, nil
		}
		return nil, errInvalidJSON
	}
	if trimmed[0] != '{' {
		return nil, errInvalidJSON
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, errInvalidJSON
	}
	return m, nil
}

// optString reads member k: absent or null is (nil, true); a string is (&s, true); any other
// JSON type is (nil, false).
func optString(m map[string]json.RawMessage, k string) (*string, bool) {
	raw, ok := m[k]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false
	}
	return &s, true
}
