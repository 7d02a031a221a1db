package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"tori.dev/services/deploys/internal/deploy"
	"tori.dev/services/deploys/internal/preview"
	"tori.dev/services/deploys/internal/upload"
)

// The preview members of POST /api/apps/{slug}/previews: JSON members beside an image
// deploy's, or multipart form fields of the same names beside a deploy's parts (env holding
// the JSON object).
const (
	fieldName       = "name"
	fieldTTLSeconds = "ttlSeconds"
	fieldEnv        = "env"
	fieldDatabase   = "database"
)

// maxEnvField bounds the env form field: the overrides' own bound plus JSON's quoting.
const maxEnvField = 2 * preview.MaxOverridesBytes

// previewJSON is the preview's members of a JSON body; raw so a wrong type names its member.
type previewJSON struct {
	Name       json.RawMessage `json:"name"`
	TTLSeconds json.RawMessage `json:"ttlSeconds"`
	Env        json.RawMessage `json:"env"`
	Database   json.RawMessage `json:"database"`
}

// decodePreviewJSON reads the preview's members of an image preview's body.
func decodePreviewJSON(raw []byte) (preview.Input, error) {
	var b previewJSON
	if err := json.Unmarshal(raw, &b); err != nil {
		return preview.Input{}, fmt.Errorf("%w: %v", deploy.ErrInvalidBody, err)
	}
	var in preview.Input
	if err := jsonString(b.Name, fieldName, &in.Name); err != nil {
		return in, err
	}
	if present(b.Name) && in.Name == "" {
		return in, &deploy.ParamError{Name: fieldName, Reason: "must not be empty"}
	}
	if err := jsonString(b.Database, fieldDatabase, &in.Database); err != nil {
		return in, err
	}
	if present(b.TTLSeconds) {
		ttl, err := parseTTL(string(b.TTLSeconds))
		if err != nil {
			return in, err
		}
		in.TTLSeconds = &ttl
	}
	if present(b.Env) {
		env, err := parseEnv(b.Env)
		if err != nil {
			return in, err
		}
		in.Env = env
	}
	return in, nil
}

// decodePatch reads PATCH's body: ttlSeconds, the one member a preview changes in place (a
// new name, env or database is a new preview or a replacement).
func decodePatch(raw []byte) (int64, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return 0, fmt.Errorf("%w: a JSON object is expected", deploy.ErrInvalidBody)
	}
	for k := range members {
		if k != fieldTTLSeconds {
			return 0, &deploy.ParamError{Name: k, Reason: "cannot be changed in place; only ttlSeconds can"}
		}
	}
	if !present(members[fieldTTLSeconds]) {
		return 0, &deploy.ParamError{Name: fieldTTLSeconds, Reason: "is required"}
	}
	return parseTTL(string(members[fieldTTLSeconds]))
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

func jsonString(raw json.RawMessage, name string, out *string) error {
	if !present(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &deploy.ParamError{Name: name, Reason: "must be a string"}
	}
	return nil
}

// parseTTL reads ttlSeconds: a whole number of seconds (the plan's cap applies later).
func parseTTL(s string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return 0, &deploy.ParamError{Name: fieldTTLSeconds, Reason: fmt.Sprintf("must be an integer of at least %d", preview.MinTTLSeconds)}
	}
	return n, nil
}

// parseEnv reads the overrides: a JSON object of strings.
func parseEnv(raw []byte) (map[string]string, error) {
	var env map[string]string
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&env); err != nil || env == nil {
		return nil, &deploy.ParamError{Name: fieldEnv, Reason: "must be an object of string values"}
	}
	return env, nil
}

// previewFields reads a multipart preview's own fields into in as the body streams; a field
// twice is a malformed body.
func previewFields(in *preview.Input) upload.Fields {
	seen := map[string]bool{}
	return func(field string, part io.Reader) (bool, error) {
		limit := int64(64)
		switch field {
		case fieldEnv:
			limit = maxEnvField
		case fieldName, fieldTTLSeconds, fieldDatabase:
		default:
			return false, nil
		}
		if seen[field] {
			return true, fmt.Errorf("%w: more than one `%s` part", deploy.ErrInvalidBody, field)
		}
		seen[field] = true
		b, err := io.ReadAll(io.LimitReader(part, limit+1))
		if err != nil {
			return true, err
		}
		if int64(len(b)) > limit {
			return true, &deploy.ParamError{Name: field, Reason: fmt.Sprintf("is longer than %d bytes", limit)}
		}
		v := strings.TrimSpace(string(b))
		switch field {
		case fieldName:
			if v == "" {
				return true, &deploy.ParamError{Name: fieldName, Reason: "must not be empty"}
			}
			in.Name = v
		case fieldDatabase:
			in.Database = v
		case fieldTTLSeconds:
			ttl, err := parseTTL(v)
			if err != nil {
				return true, err
			}
			in.TTLSeconds = &ttl
		case fieldEnv:
			if in.Env, err = parseEnv(b); err != nil {
				return true, err
			}
		}
		return true, nil
	}
}
